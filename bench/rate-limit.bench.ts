/**
 * Issue 12: can PostgreSQL hold the shared rate limit, or does it need Redis? Two parts, one run:
 * 1. The store alone: one upsert per request on the key's row (the simple scheme), one at a time
 *    (latency) and 16 in flight for BENCH_SECONDS (rate), on one hot key and on 1,000 keys; next to
 *    it the scheme shipped: each replica answers from memory and adds its hits to the store in one
 *    statement per 100 ms (timed: one flush of 1,000 keys).
 * 2. Through an API process: `GET /sandboxes?limit=1` on PostgreSQL with the shared limit and with
 *    the limit off, and on SQLite with the plugin's memory limit and off (the plugin's own cost).
 * The default limit is 2,000 requests per 10 s per key (200/s per key); the store must hold the sum
 * of what every replica serves. Prints medians, p99 and rates; asserts nothing.
 * Run: node bench/rate-limit.bench.ts   (BENCH_REQUESTS, default 2000; BENCH_SECONDS, default 5)
 */
import { systemClock } from '../packages/server/src/clock.ts';
import { SharedRateLimits } from '../packages/server/src/services/access/rate-limits.ts';
import { openDb } from '../packages/server/src/store/db.ts';
import { RateLimitStore } from '../packages/server/src/store/rate-limits.ts';
import { createDatabase, PostgresCluster } from '../packages/server/test/helpers/postgres.ts';
import { Api, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, percentile, sample } from './stats.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const IN_FLIGHT = 16;
const ROUNDS = 5;
const DEFAULT_PER_KEY_PER_S = 2000 / 10;

/** Runs `fn` with IN_FLIGHT calls outstanding for `seconds`; answers calls per second. */
async function throughput(fn: (i: number) => Promise<unknown>, seconds = SECONDS): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < end) await fn(done++);
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return done / ((performance.now() - t0) / 1000);
}

const line = (name: string, xs: number[]) => `${name.padEnd(52)} median ${median(xs).toFixed(3).padStart(7)} ms   p99 ${percentile(xs, 99).toFixed(3).padStart(7)} ms`;
const rate = (name: string, perS: number) => `${name.padEnd(52)} ${Math.round(perS).toString().padStart(7)} /s`;

const cluster = await PostgresCluster.start();
const servers: ServerProcess[] = [];
try {
  const database = await createDatabase(cluster.adminUrl);
  const db = await openDb({ dataDir: cluster.dir, databaseUrl: database.url });
  try {
    const store = new RateLimitStore(db);
    const upsert = (key: string) => store.add([{ key, hits: 1 }], Date.now(), 10_000);
    console.log(`store alone (PostgreSQL 15, unlogged table, pool of 10; ${IN_FLIGHT} in flight for rates):`);
    console.log(line('one upsert per request, one at a time', await sample(REQUESTS, () => upsert('hot'))));
    const hot = await throughput(() => upsert('hot'));
    console.log(rate('one upsert per request, one hot key', hot));
    console.log(rate('one upsert per request, 1,000 keys', await throughput((i) => upsert(`key-${i % 1000}`))));
    console.log(`  one hot key: ${(hot / DEFAULT_PER_KEY_PER_S).toFixed(1)}x the default limit's 200 requests/s per key`);
    const limits = new SharedRateLimits(store, systemClock, 3_600_000);
    const thousand = async () => {
      for (let k = 0; k < 1000; k++) limits.hit('bench', `key-${k}`, 10_000);
      await limits.flush();
    };
    console.log(line('shipped: one flush of 1,000 keys (per 100 ms)', await sample(50, thousand)));
    const answers = await sample(REQUESTS, async () => limits.hit('bench', 'hot', 10_000));
    console.log(line('shipped: one request answered from memory', answers));
    await limits.close();
  } finally {
    await db.destroy();
  }

  const env = { SANDPIT_DRIVER: 'container', SANDPIT_RATE_LIMIT: String(1e9) };
  const pgLimited = await ServerProcess.start({ ...env, SANDPIT_DATABASE_URL: database.url });
  servers.push(pgLimited);
  const other = await createDatabase(cluster.adminUrl);
  const pgOpen = await ServerProcess.start({ ...env, SANDPIT_RATE_LIMIT: '0', SANDPIT_DATABASE_URL: other.url });
  servers.push(pgOpen);
  const lite = await ServerProcess.start(env);
  servers.push(lite);
  const liteOpen = await ServerProcess.start({ ...env, SANDPIT_RATE_LIMIT: '0' });
  servers.push(liteOpen);
  const cases: [string, ServerProcess][] = [
    ['PostgreSQL, limit off', pgOpen],
    ['PostgreSQL, limit in the store', pgLimited],
    ['SQLite, limit off', liteOpen],
    ['SQLite, limit in memory', lite],
  ];
  console.log(`\nGET /sandboxes?limit=1 through one API process (cases interleaved over ${ROUNDS} rounds, against drifting load):`);
  const latencies = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  const rateSums = new Map<string, number>(cases.map(([name]) => [name, 0]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, server] of cases) {
      const api = new Api(server.url, server.key);
      const get = async () => {
        const res = await api.get('/sandboxes?limit=1');
        if (res.status !== 200) throw new Error(`${name}: ${res.status} ${JSON.stringify(res.body)}`);
      };
      latencies.get(name)!.push(...(await sample(REQUESTS / ROUNDS, get)));
      rateSums.set(name, rateSums.get(name)! + (await throughput(get, SECONDS / ROUNDS)));
    }
  }
  const medians: Record<string, number> = {};
  const rates: Record<string, number> = {};
  for (const [name] of cases) {
    medians[name] = median(latencies.get(name)!);
    rates[name] = rateSums.get(name)! / ROUNDS;
    console.log(line(name, latencies.get(name)!));
    console.log(rate(`${name}, ${IN_FLIGHT} in flight`, rates[name]));
  }
  const ratio = (on: string, off: string) => `${(medians[on]! - medians[off]!).toFixed(3)} ms to the median, throughput ${(rates[on]! / rates[off]!).toFixed(2)}x`;
  console.log(`  PostgreSQL: the limit (plugin and shared store) adds ${ratio('PostgreSQL, limit in the store', 'PostgreSQL, limit off')}`);
  console.log(`  SQLite: the limit (plugin and memory store) adds ${ratio('SQLite, limit in memory', 'SQLite, limit off')}`);
} finally {
  for (const s of servers.toReversed()) await s.stop();
  await cluster.stop();
}
