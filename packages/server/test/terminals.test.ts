import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WebSocket } from 'ws';
import { Api, sandboxFixture } from './helpers/server-process.ts';

const fx = sandboxFixture();

const api = () => new Api(fx.server.url);

/** A WebSocket client that accumulates terminal output and control messages. */
class Term {
  ws: WebSocket;
  out = '';
  controls: any[] = [];
  closed: Promise<number>;
  #waiters: (() => void)[] = [];

  constructor(id: string, headers: Record<string, string> = fx.dp, query = '') {
    this.ws = new WebSocket(`${fx.server.url.replace('http', 'ws')}/terminals/${id}/connect${query}`, { headers });
    this.ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.out += data.toString('utf8');
      else this.controls.push(JSON.parse(data.toString('utf8')));
      for (const w of this.#waiters.splice(0)) w();
    });
    this.closed = new Promise((r) => this.ws.once('close', (code) => r(code)));
  }

  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
  }

  async waitFor(re: RegExp, ms = 10_000): Promise<void> {
    const end = Date.now() + ms;
    while (!re.test(this.out)) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${re}; got ${JSON.stringify(this.out.slice(-500))}`);
      await new Promise<void>((r) => {
        this.#waiters.push(r);
        setTimeout(r, 100);
      });
    }
  }

  type(s: string): void {
    this.ws.send(Buffer.from(s), { binary: true });
  }
}

test('a terminal session: type, echo, resize, reconnect, exit status', async () => {
  const created = await api().post('/terminals', { cols: 100, rows: 30 }, fx.dp);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const t = created.body;
  assert.equal(t.command, '/bin/bash');
  assert.deepEqual(t.args, ['-l']);
  assert.equal(t.running, true);
  assert.ok(t.pid > 0);

  const a = new Term(t.id);
  await a.open();
  // Opening a terminal is in the audit log (who, which sandbox), as its creation is.
  const audit = (await new Api(fx.server.url, fx.server.key).get(`/audit-log?resource_id=${fx.sb.id}`)).body.entries.map((e: any) => `${e.action} ${e.status} ${e.actor.type}`);
  assert.ok(audit.includes('sandbox.terminal.open 101 access_token') && audit.includes('sandbox.terminal.create 201 access_token'), String(audit));
  a.type('echo "$TERM $(id -un) $(pwd)"; stty size\r');
  await a.waitFor(/xterm-256color user \/home\/user\r\n30 100\r\n/);
  // Control messages are JSON text frames; other text frames are raw input.
  a.ws.send(JSON.stringify({ type: 'resize', cols: 132, rows: 43 }));
  a.ws.send('stty size\r');
  await a.waitFor(/43 132\r\n/);
  a.ws.send(JSON.stringify({ type: 'input', data: 'echo via-control\r' }));
  await a.waitFor(/\rvia-control\r\n/);

  // Output while nobody is connected is kept and replayed.
  a.type('sleep 0.5; echo detached-$((6*7))\r');
  a.ws.close();
  await a.closed;
  await new Promise((r) => setTimeout(r, 1000));
  const list = await api().get('/terminals', fx.dp);
  assert.deepEqual(
    list.body.terminals.map((x: any) => [x.id, x.running]),
    [[t.id, true]],
  );
  const b = new Term(t.id, {}, `?access_token=${fx.sb.access_token}&sandbox_id=${fx.sb.id}`);
  await b.open();
  await b.waitFor(/detached-42/);
  assert.match(b.out, /via-control/);

  b.type('exit 3\r');
  assert.equal(await b.closed, 1000);
  assert.deepEqual(b.controls.at(-1), { type: 'exit', exit_code: 3, signal: null });
  const ended = await api().get(`/terminals/${t.id}`, fx.dp);
  assert.equal(ended.body.running, false);
  assert.equal(ended.body.exit_code, 3);
  assert.equal((await api().req('DELETE', `/terminals/${t.id}`, undefined, fx.dp)).status, 204);
  assert.equal((await api().get(`/terminals/${t.id}`, fx.dp)).status, 404);
});

test('custom command, delete kills it, unknown ids and bad tokens are refused before the upgrade', async () => {
  const created = await api().post('/terminals', { command: 'cat' }, fx.dp);
  assert.equal(created.status, 201);
  const term = new Term(created.body.id);
  await term.open();
  term.type('hello\r');
  await term.waitFor(/hello\r\nhello\r\n/);
  assert.equal((await api().req('DELETE', `/terminals/${created.body.id}`, undefined, fx.dp)).status, 204);
  await term.closed;
  assert.equal(term.controls.at(-1).type, 'exit');

  const missing = new WebSocket(`${fx.server.url.replace('http', 'ws')}/terminals/nope/connect`, { headers: fx.dp });
  const status = await new Promise<number>((r) => missing.once('unexpected-response', (_req, res) => r(res.statusCode ?? 0)));
  assert.equal(status, 404);
  const badToken = new WebSocket(`${fx.server.url.replace('http', 'ws')}/terminals/nope/connect`, { headers: { ...fx.dp, 'x-access-token': 'wrong' } });
  assert.equal(await new Promise<number>((r) => badToken.once('unexpected-response', (_req, res) => r(res.statusCode ?? 0))), 401);
  assert.equal((await api().post('/terminals', { cols: 0 }, fx.dp)).status, 400);
  assert.equal((await api().post('/terminals', {}, { ...fx.dp, 'x-access-token': 'wrong' })).status, 401);
});

test('keystroke to echo latency', async () => {
  const created = await api().post('/terminals', { command: 'stty raw -echo; cat' }, fx.dp);
  const term = new Term(created.body.id);
  await term.open();
  await new Promise((r) => setTimeout(r, 300));
  const samples: number[] = [];
  for (let i = 0; i < 200; i++) {
    const marker = `k${i};`;
    const t0 = performance.now();
    term.type(marker);
    await term.waitFor(new RegExp(marker));
    samples.push(performance.now() - t0);
  }
  samples.sort((x, y) => x - y);
  const median = samples[100]!;
  console.log(`terminal keystroke-to-echo: median ${median.toFixed(3)} ms, p90 ${samples[180]!.toFixed(3)} ms`);
  assert.ok(median < 5, `median ${median} ms`);
  await api().req('DELETE', `/terminals/${created.body.id}`, undefined, fx.dp);
});
