/**
 * gVisor sandboxes busy with system calls at the same time, per engine CPU count
 * (SANDPIT_GVISOR_MIN_CPUS): how long N sandboxes take for the same work each (200,000 `stat()` in
 * python3), and how quickly the server answers a `GET /sandboxes/{id}` meanwhile (sampled every 20 ms).
 * Beside it, raw `runsc run /bin/true` in the same run. Prints medians; asserts nothing.
 *
 *   node bench/busy-neighbours.bench.ts    BENCH_COUNTS (1,2,4,8), BENCH_CPUS (1,2), BENCH_ROUNDS (2)
 */
import { defaultRunsc } from '../packages/server/src/runtime/gvisor/engines.ts';
import { ensureBaseTemplate } from '../packages/server/src/templates/base-template.ts';
import { Api, IMAGE_DIR, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { rawRunscTrue } from './raw-engines.ts';
import { median, percentile } from './stats.ts';

const COUNTS = (process.env.BENCH_COUNTS ?? '1,2,4,8').split(',').map(Number);
const CPUS = (process.env.BENCH_CPUS ?? '1,2').split(',');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WORK = `python3 -c 'import os\nfor _ in range(200000): os.stat("/")'`;

async function storm(cpus: string, n: number): Promise<{ ms: number; get: number[] }> {
  const srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_RATE_LIMIT: '0', SANDPIT_GVISOR_MIN_CPUS: cpus, SANDPIT_MAX_ACTIVE_SANDBOXES: String(n + 2) });
  const api = new Api(srv.url, srv.key);
  try {
    const probe = (await api.post('/sandboxes', {})).body.id;
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await api.post('/sandboxes', {})).body.id);
    const get: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const t0 = performance.now();
        await api.get(`/sandboxes/${probe}`);
        get.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const t0 = performance.now();
    await Promise.all(
      ids.map(async (id) => {
        const res = await api.post(`/sandboxes/${id}/exec`, { command: WORK, timeout_s: 300 });
        if (res.status !== 200 || res.body.exit_code !== 0) throw new Error(`work: ${res.status} ${JSON.stringify(res.body)}`);
      }),
    );
    const ms = performance.now() - t0;
    sampling = false;
    await sampler;
    return { ms, get };
  } finally {
    await srv.stop();
  }
}

const rootfs = await ensureBaseTemplate(IMAGE_DIR);
const raw = median(await rawRunscTrue(await defaultRunsc(), 'systrap', rootfs, 5));
console.log(`raw \`runsc run /bin/true\`: median ${raw.toFixed(1)} ms; ${ROUNDS} rounds, settings alternating\n`);
for (const n of COUNTS) {
  const rows = new Map<string, { ms: number[]; get: number[] }>(CPUS.map((c) => [c, { ms: [], get: [] }]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const c of CPUS) {
      const out = await storm(c, n);
      rows.get(c)!.ms.push(out.ms);
      rows.get(c)!.get.push(...out.get);
    }
  }
  for (const [c, row] of rows) {
    console.log(
      `${n} busy, engine on ${c} CPU(s)`.padEnd(30),
      `all done in ${(median(row.ms) / 1000).toFixed(1).padStart(5)} s (${row.ms.map((x) => (x / 1000).toFixed(1)).join(', ')})`,
      `  GET meanwhile: median ${median(row.get).toFixed(1)} ms, p99 ${percentile(row.get, 99).toFixed(1)} ms, max ${Math.max(...row.get).toFixed(0)} ms`,
    );
  }
}
