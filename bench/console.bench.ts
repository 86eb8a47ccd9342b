/**
 * Issue 17 console benchmarks in Debian's Chromium against a real server (container driver):
 * - first load: compressed JavaScript the sign-in and sandboxes pages fetch (target at most 300 KB),
 *   and time from navigation to an interactive sandboxes list, cold cache (target 1 s), against
 *   the same browser loading a bare JSON document from the same server;
 * - terminal keystroke echo in the console's xterm.js (target 20 ms): from the key event to the
 *   echo arriving on the page's WebSocket and to the echo painted in the terminal rows, against a
 *   raw WebSocket client from Node on the same PTY kind.
 * Run: node bench/console.bench.ts  (BENCH_KEYS sets the keystrokes, default 200)
 */
import { chromium } from 'playwright-core';
import { WebSocket } from 'ws';
import { buildConsole, consoleIsStale } from '../packages/console/scripts/build-if-stale.ts';
import { CHROMIUM } from '../packages/console/test/chromium.ts';
import { Api, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, ratio, report } from './stats.ts';

const KEYS = Number(process.env.BENCH_KEYS ?? 200);
const LOADS = 10;

if (consoleIsStale()) buildConsole();
const server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_RATE_LIMIT: '0' });
const browser = await chromium.launch(CHROMIUM);
try {
  const signIn = await fetch(`${server.url}/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: server.key }) });
  const cookieValue = /sandpit_session=([^;]+)/.exec(signIn.headers.get('set-cookie') ?? '')![1]!;
  const cookie = { name: 'sandpit_session', value: cookieValue, domain: '127.0.0.1', path: '/', httpOnly: true, sameSite: 'Strict' as const };

  // First load, cold cache each time: a fresh context has no cache.
  const tti: number[] = [];
  const wall: number[] = [];
  const raw: number[] = [];
  let jsBytes = 0;
  for (let i = 0; i < LOADS; i++) {
    const ctx = await browser.newContext();
    await ctx.addCookies([cookie]);
    // In the page, from its navigation start: when the list heading and its filters are on screen.
    await ctx.addInitScript(() => {
      const mo = new MutationObserver(() => {
        if ([...document.querySelectorAll('h1')].some((h) => h.textContent === 'Sandboxes') && document.querySelector('select')) {
          (window as any).__interactiveAt = performance.now();
          mo.disconnect();
        }
      });
      mo.observe(document, { childList: true, subtree: true });
    });
    const page = await ctx.newPage();
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Network.enable');
    const js = new Map<string, number>();
    const types = new Map<string, string>();
    cdp.on('Network.responseReceived', (e) => types.set(e.requestId, e.type));
    cdp.on('Network.loadingFinished', (e) => types.get(e.requestId) === 'Script' && js.set(e.requestId, e.encodedDataLength));
    const t0 = performance.now();
    await page.goto(`${server.url}/console/sandboxes`);
    await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();
    await page.getByLabel('Status').waitFor();
    wall.push(performance.now() - t0);
    tti.push(await page.evaluate(() => (window as any).__interactiveAt as number));
    jsBytes = [...js.values()].reduce((a, b) => a + b, 0);
    await page.goto(`${server.url}/info`);
    raw.push(await page.evaluate(() => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).loadEventEnd));
    await ctx.close();
  }
  console.log(`first-load JavaScript over the wire (brotli)     ${(jsBytes / 1024).toFixed(1)} KB   (target at most 300 KB)`);
  report('console: navigation start to interactive list', tti, '1000 ms');
  report('  same, wall clock from the test (adds CDP)', wall);
  report('raw: same browser, navigation to GET /info loaded', raw);
  ratio('console first load', tti, raw);

  // Keystroke echo in the console terminal.
  const sb = (await new Api(server.url, server.key).post('/sandboxes', { name: 'bench' })).body;
  const ctx = await browser.newContext();
  await ctx.addCookies([cookie]);
  await ctx.addInitScript(() => {
    const Native: any = (window as any).WebSocket;
    (window as any).__wsAt = 0;
    (window as any).WebSocket = class extends Native {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols);
        this.addEventListener('message', () => ((window as any).__wsAt = performance.now()));
      }
    };
  });
  const page = await ctx.newPage();
  await page.goto(`${server.url}/console/sandboxes/${sb.id}`);
  await page.getByRole('button', { name: 'Open terminal' }).click();
  await page.getByText('Terminal connected').waitFor();
  await page.locator('.xterm').click();
  await page.keyboard.type('stty -echo; cat -u >/dev/null & stty echo; clear\n');
  await page.waitForTimeout(500);
  const times = await page.evaluate(async (n: number) => {
    const textarea = document.querySelector('.xterm-helper-textarea') as HTMLTextAreaElement;
    const rows = document.querySelector('.xterm-rows')!;
    const wire: number[] = [];
    const painted: number[] = [];
    for (let i = 0; i < n; i++) {
      const ch = String.fromCharCode(97 + (i % 26));
      const before = rows.textContent ?? '';
      const seen = new Promise<number>((resolve) => {
        const mo = new MutationObserver(() => {
          if ((rows.textContent ?? '') !== before) {
            mo.disconnect();
            resolve(performance.now());
          }
        });
        mo.observe(rows, { childList: true, subtree: true, characterData: true });
      });
      const t0 = performance.now();
      textarea.dispatchEvent(new KeyboardEvent('keydown', { key: ch, code: `Key${ch.toUpperCase()}`, keyCode: ch.toUpperCase().charCodeAt(0), bubbles: true }));
      textarea.dispatchEvent(new KeyboardEvent('keypress', { key: ch, charCode: ch.charCodeAt(0), keyCode: ch.charCodeAt(0), bubbles: true }));
      const t1 = await seen;
      wire.push((window as any).__wsAt - t0);
      painted.push(t1 - t0);
      if (i % 60 === 59) textarea.dispatchEvent(new KeyboardEvent('keydown', { key: 'u', code: 'KeyU', keyCode: 85, ctrlKey: true, bubbles: true }));
      await new Promise((r) => setTimeout(r, 5));
    }
    return { wire, painted };
  }, KEYS);
  report('console terminal: key to echo on the socket', times.wire, '20 ms');
  report('console terminal: key to echo painted', times.painted, '20 ms');

  // Raw: a WebSocket client from Node on a login shell PTY, one character at a time.
  const dp = { 'x-platform-sandbox-id': sb.id, 'x-access-token': (await new Api(server.url, server.key).post(`/sandboxes/${sb.id}/activate`)).body.access_token };
  const term = (await new Api(server.url).post('/terminals', {}, dp)).body;
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/terminals/${term.id}/connect`, { headers: dp });
  await new Promise((r) => ws.once('open', r));
  await new Promise((r) => setTimeout(r, 500));
  let got = 0;
  let wake: (() => void) | undefined;
  ws.on('message', (_d: Buffer, binary: boolean) => {
    if (!binary) return;
    got++;
    wake?.();
  });
  const rawEcho: number[] = [];
  for (let i = 0; i < KEYS; i++) {
    const before = got;
    const t0 = performance.now();
    ws.send(Buffer.from(String.fromCharCode(97 + (i % 26))), { binary: true });
    while (got === before) await new Promise<void>((r) => (wake = r));
    rawEcho.push(performance.now() - t0);
    if (i % 60 === 59) ws.send(Buffer.from([21]), { binary: true });
    await new Promise((r) => setTimeout(r, 5));
  }
  ws.close();
  report('raw: Node WebSocket key to echo', rawEcho);
  ratio('console terminal echo (socket)', times.wire, rawEcho);
  ratio('console terminal echo (painted)', times.painted, rawEcho);
  console.log(`painted minus socket, median                     ${(median(times.painted) - median(times.wire)).toFixed(2)} ms (xterm.js draws on the next animation frame)`);
  await ctx.close();
} finally {
  await browser.close();
  await server.stop();
}
