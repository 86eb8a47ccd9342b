/**
 * Issue 5 data-plane benchmarks against a real server process: 1 GiB upload and download
 * throughput (targets: 200 MB/s each) and terminal keystroke-to-echo latency (target: 5 ms median).
 * Run: node bench/data-plane.bench.ts   (BENCH_RUNS sets the transfer runs, default 3;
 * BENCH_DRIVER=container|gvisor the engine). The bench client shares the host's CPUs with the
 * server and the sandbox, so concurrent load moves these numbers a lot: compare runs side by side.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { WebSocket } from 'ws';
import { Api, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, report } from './stats.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SIZE = 1024 * 1024 * 1024;

function body(): Readable {
  const block = randomBytes(1024 * 1024);
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= SIZE) return this.push(null);
      sent += block.length;
      this.push(block);
    },
  });
}

// BENCH_DRIVER=container|gvisor picks the engine (default: the server's auto choice).
const server = await ServerProcess.start(process.env.BENCH_DRIVER ? { SANDPIT_DRIVER: process.env.BENCH_DRIVER } : {});
try {
  console.log(`driver: ${/driver: (\w+)/.exec(server.output)?.[1] ?? 'unknown'}`);
  const sb = (await new Api(server.url, server.key).post('/sandboxes', {})).body;
  const dp = { 'x-platform-sandbox-id': sb.id, 'x-access-token': sb.access_token };
  const up: number[] = [];
  const down: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    let t0 = performance.now();
    const res = await fetch(`${server.url}/files?path=/home/user/bench.bin`, {
      method: 'PUT',
      headers: { ...dp, 'content-type': 'application/octet-stream' },
      body: Readable.toWeb(body()) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${await res.text()}`);
    up.push(performance.now() - t0);
    t0 = performance.now();
    const d = await fetch(`${server.url}/files?path=/home/user/bench.bin`, { headers: dp });
    let got = 0;
    for await (const chunk of d.body as unknown as AsyncIterable<Uint8Array>) got += chunk.length;
    if (got !== SIZE) throw new Error(`download: ${got} bytes`);
    down.push(performance.now() - t0);
  }
  const mbps = (ms: number[]) => (SIZE / 1e6 / (median(ms) / 1000)).toFixed(0);
  report('1 GiB upload', up);
  console.log(`  -> ${mbps(up)} MB/s (target 200 MB/s)`);
  report('1 GiB download', down);
  console.log(`  -> ${mbps(down)} MB/s (target 200 MB/s)`);

  const term = (await new Api(server.url).post('/terminals', { command: 'stty raw -echo; cat' }, dp)).body;
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/terminals/${term.id}/connect`, { headers: dp });
  await new Promise((r) => ws.once('open', r));
  await new Promise((r) => setTimeout(r, 300));
  let out = '';
  let wake: (() => void) | undefined;
  ws.on('message', (data: Buffer) => {
    out += data.toString();
    wake?.();
  });
  const lat: number[] = [];
  for (let i = 0; i < 500; i++) {
    const marker = `k${i};`;
    const t0 = performance.now();
    ws.send(Buffer.from(marker), { binary: true });
    while (!out.includes(marker)) await new Promise<void>((r) => (wake = r));
    lat.push(performance.now() - t0);
  }
  report('terminal keystroke-to-echo', lat, '5 ms');
  ws.close();
} finally {
  await server.stop();
}
