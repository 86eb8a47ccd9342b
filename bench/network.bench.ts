/**
 * Issue 4 benchmarks against a real server process and a test "internet" namespace:
 * egress proxy overhead per HTTP request (vs the same requests sent directly from the host,
 * i.e. without the proxy), requests/s through one sandbox's proxy, preview proxy overhead
 * (vs connecting to the sandbox address directly), and create -> ready.
 * Run: node bench/network.bench.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Internet } from '../packages/server/test/helpers/internet.ts';
import { Api, ServerProcess } from '../packages/server/test/helpers/server-process.ts';

const run = promisify(execFile);
const N = Number(process.env.BENCH_REQUESTS ?? 1000);

/** Sequential keep-alive GETs: median latency in ms; then 8 concurrent clients for 2 s: requests/s. */
const LOAD = (url: string, host: string, n: number) => `
const http = require('http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
const get = () => new Promise((ok, fail) => http.get('${url}', { agent, headers: { host: '${host}' } }, (r) => { r.resume(); r.on('end', ok); }).on('error', fail));
(async () => {
  for (let i = 0; i < 50; i++) await get();
  const t = [];
  for (let i = 0; i < ${n}; i++) { const s = process.hrtime.bigint(); await get(); t.push(Number(process.hrtime.bigint() - s) / 1e6); }
  t.sort((a, b) => a - b);
  let count = 0; const end = Date.now() + 2000;
  await Promise.all(Array.from({ length: 8 }, async () => { while (Date.now() < end) { await get(); count++; } }));
  console.log(JSON.stringify({ median: t[t.length >> 1], rps: count / 2 }));
})();`;

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-bench-net-'));
  const inet = await Internet.start(dir);
  let server: ServerProcess | undefined;
  try {
    server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_DNS_UPSTREAM: `${inet.dns}:53`, SANDPIT_EGRESS_UPSTREAM_CA: inet.caFile });
    const api = new Api(server.url, server.key);
    const creates: number[] = [];
    let sb: any;
    for (let i = 0; i < 10; i++) {
      const t = performance.now();
      const res = await api.post('/sandboxes', {});
      creates.push(performance.now() - t);
      if (i < 9) await api.del(`/sandboxes/${res.body.id}`);
      else sb = res.body;
      await new Promise((r) => setTimeout(r, 100));
    }
    creates.sort((a, b) => a - b);
    const sh = async (command: string) => (await api.post(`/sandboxes/${sb.id}/exec`, { command, timeout_s: 60 })).body;
    const upstream = inet.names['api.example.test'];
    const direct = JSON.parse((await run(process.execPath, ['-e', LOAD(`http://${upstream}/`, 'api.example.test', N)])).stdout);
    const proxied = JSON.parse((await sh(`node -e "${LOAD(`http://${upstream}/`, 'api.example.test', N).replace(/"/g, '\\"').replace(/\$/g, '\\$')}"`)).stdout);

    await sh(`cat > /tmp/srv.js <<'JS'
require('http').createServer((req, res) => res.end('ok')).listen(3000, '0.0.0.0');
JS
setsid node /tmp/srv.js >/dev/null 2>&1 < /dev/null & sleep 0.5`);
    await api.post(`/sandboxes/${sb.id}/preview-ports`, { port: 3000 });
    const ip = (await sh("ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1")).stdout.trim();
    const toSandbox = JSON.parse((await run(process.execPath, ['-e', LOAD(`http://${ip}:3000/`, 'x', N)])).stdout);
    const viaPreview = JSON.parse((await run(process.execPath, ['-e', LOAD(`http://127.0.0.1:${server.port}/`, `3000-${sb.id}.preview.localhost`, N)])).stdout);

    const ms = (x: number) => `${x.toFixed(3)} ms`;
    console.log(`create -> ready (with network), median of 10: ${ms(creates[5]!)}`);
    console.log(`egress: direct from host ${ms(direct.median)}, through the sandbox's proxy ${ms(proxied.median)}; overhead ${ms(proxied.median - direct.median)} (target <= 1 ms)`);
    console.log(`egress requests/s through one sandbox's proxy (8 clients): ${proxied.rps.toFixed(0)} (target >= 500); direct: ${direct.rps.toFixed(0)}`);
    console.log(`preview: direct to the sandbox ${ms(toSandbox.median)}, through the preview gateway ${ms(viaPreview.median)}; overhead ${ms(viaPreview.median - toSandbox.median)} (target <= 1 ms)`);
    await api.del(`/sandboxes/${sb.id}`);
  } finally {
    await server?.stop();
    inet.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
