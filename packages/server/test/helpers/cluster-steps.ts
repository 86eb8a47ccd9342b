import { WebSocket } from 'ws';
import type { Api } from './server-process.ts';

/** Polls `f` every 200 ms until it gives something truthy; fails after `ms` naming what it waited for. */
export async function until<T>(what: string, f: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Opens a `cat` terminal through `api` (data-plane headers `dp`), types `text` and waits for its echo over the WebSocket. */
export async function terminalEcho(api: Api, dp: Record<string, string>, text: string): Promise<void> {
  const term = await api.post('/terminals', { command: 'cat' }, dp);
  if (term.status !== 201) throw new Error(`terminal: ${term.status} ${JSON.stringify(term.body)}`);
  const ws = new WebSocket(`${api.base.replace('http', 'ws')}/terminals/${term.body.id}/connect`, { headers: dp });
  let out = '';
  ws.on('message', (m, binary) => {
    if (binary) out += m.toString();
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  try {
    ws.send(Buffer.from(`${text}\n`));
    await until('terminal echo', async () => out.includes(text), 10_000);
  } finally {
    ws.close();
  }
}
