/**
 * The service's start-up on a data directory that holds a fleet: BENCH_PAUSED paused gVisor sandboxes
 * (default 200) and BENCH_ACTIVE running ones beside them (default 0; each keeps the host's CPU a
 * little busy, as in production). The server is killed (no shutdown path) and started again
 * BENCH_ROUNDS times (default 5, after one warm-up), timed from the kill to `platform/base ready`.
 * With BENCH_BASELINE set to another Sandpit checkout (its own `node_modules`, e.g. a `git worktree`
 * of an older commit), its server and this one's are started in turns on the same data directory, so
 * the host's drift falls on both alike, and the ratio is printed. Prints; asserts nothing.
 * Run: BENCH_PAUSED=1000 BENCH_ACTIVE=100 BENCH_BASELINE=/tmp/old node bench/start-up.bench.ts
 */
import { join } from 'node:path';
import pMap from 'p-map';
import { Api, CLI, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, timeIt } from './stats.ts';

const PAUSED = Number(process.env.BENCH_PAUSED ?? 200);
const ACTIVE = Number(process.env.BENCH_ACTIVE ?? 0);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BASELINE = process.env.BENCH_BASELINE;
const PARALLEL = 4;

const pool = (n: number, fn: () => Promise<void>) => pMap(Array.from({ length: n }), fn, { concurrency: PARALLEL });

const srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_MAX_ACTIVE_SANDBOXES: String(ACTIVE + PARALLEL), SANDPIT_MAX_SANDBOXES: String(PAUSED + ACTIVE + PARALLEL) });
const api = new Api(srv.url, srv.key);
try {
  let failed = 0;
  const built = await timeIt(async () => {
    await pool(PAUSED, async () => {
      const created = await api.post('/sandboxes', {});
      const paused = created.status === 201 ? await api.post(`/sandboxes/${created.body.id}/pause`) : created;
      if (paused.status !== 200) failed++;
    });
    await pool(ACTIVE, async () => {
      if ((await api.post('/sandboxes', {})).status !== 201) failed++;
    });
  });
  console.log(`fleet: ${PAUSED} paused, ${ACTIVE} active, built in ${(built / 1000).toFixed(0)} s, ${failed} failed`);

  const trees = BASELINE
    ? [
        { name: 'baseline', cli: join(BASELINE, 'packages/cli/src/main.ts') },
        { name: 'this tree', cli: CLI },
      ]
    : [{ name: 'this tree', cli: CLI }];
  const times = new Map<string, number[]>(trees.map((t) => [t.name, []]));
  for (let round = 0; round <= ROUNDS; round++) {
    for (const tree of trees) {
      await srv.kill9();
      srv.cli = tree.cli;
      const ms = await timeIt(() => srv.launch());
      // The first round fills Node's compile cache and the page cache for either tree: not counted.
      if (round > 0) times.get(tree.name)!.push(ms);
    }
  }
  for (const [name, xs] of times) {
    const s = [...xs].sort((a, b) => a - b);
    console.log(`start-up, ${name}: median ${(median(xs) / 1000).toFixed(2)} s (${(s[0]! / 1000).toFixed(2)}-${(s.at(-1)! / 1000).toFixed(2)}), n=${xs.length}`);
  }
  if (BASELINE) console.log(`start-up, this tree vs baseline: ${(median(times.get('this tree')!) / median(times.get('baseline')!)).toFixed(2)}x`);
} finally {
  srv.cli = CLI;
  await srv.kill9();
  await srv.launch();
  await srv.stop();
}
