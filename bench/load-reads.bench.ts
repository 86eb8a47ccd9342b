/**
 * Issue 11 item 9: 100 sandboxes doing work while the API serves 1,000 reads a second, through a real
 * server. Reads are sent open-loop (on a clock, not after the previous answer) from 10 API keys, as
 * many clients would; each sandbox runs a command, rests half a second, and again, meanwhile (its owner's
 * key: 10 sandboxes per key, all within the default rate limit). Prints the achieved read
 * rate, read latency p50/p99 (all reads and by kind), answers other than 200, the server's event-loop
 * delay and CPU time (which, unlike latency, does not depend on how busy the rest of the host is), and
 * the exec success rate; asserts nothing.
 *
 *   node bench/load-reads.bench.ts     BENCH_DRIVER (default container), BENCH_SANDBOXES (100),
 *   BENCH_RPS (1000), BENCH_SECONDS (30), BENCH_PROFILE (a directory: the server writes a V8 CPU
 *   profile there when it stops; summarize with bench/cpu-profile.ts)
 */
import { Agent, get } from 'node:http';
import { Api, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { cpuSeconds } from './process-cpu.ts';
import { median, percentile } from './stats.ts';

const DRIVER = process.env.BENCH_DRIVER ?? 'container';
const SANDBOXES = Number(process.env.BENCH_SANDBOXES ?? 100);
const RPS = Number(process.env.BENCH_RPS ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const KEYS = 10;
/** Readers hold at most this many connections, as pooled clients do; a read's latency counts from when it was due. */
const READ_CONNECTIONS = 256;
/** Each sandbox's unit of work: some CPU, a file written and read back, output. */
const WORK = 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; head -c 262144 /dev/urandom > /tmp/w; md5sum /tmp/w | cut -c1-8';

const PROFILE = process.env.BENCH_PROFILE;
const server = await ServerProcess.start({
  SANDPIT_DRIVER: DRIVER,
  SANDPIT_MAX_ACTIVE_SANDBOXES: String(SANDBOXES + 10),
  ...(PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${PROFILE}` } : {}),
});
try {
  const admin = new Api(server.url, server.key);
  const keys: Api[] = [];
  for (let k = 0; k < KEYS; k++) {
    const made = await admin.post('/api-keys', { name: `reader-${k}` });
    if (made.status !== 201) throw new Error(`api key: ${JSON.stringify(made.body)}`);
    keys.push(new Api(server.url, made.body.key));
  }

  const t0 = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < SANDBOXES; i += 10) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, SANDBOXES - i) }, () => admin.post('/sandboxes', {})));
    for (const r of batch) {
      if (r.status !== 201) throw new Error(`create ${r.status}: ${JSON.stringify(r.body)}`);
      ids.push(r.body.id);
    }
  }
  console.log(`${SANDBOXES} ${DRIVER} sandboxes created in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  let running = true;
  const execMs: number[] = [];
  const execFailures = new Map<string, number>();
  const workers = ids.map(async (id, n) => {
    const owner = keys[n % KEYS]!;
    while (running) {
      const a = performance.now();
      const r = await owner.post(`/sandboxes/${id}/exec`, { command: WORK, timeout_s: 60 }).catch((err: Error) => ({ status: 0, body: { error: { code: err.message } } }));
      if (r.status === 200 && r.body.exit_code === 0 && /^[0-9a-f]{8}\n$/.test(r.body.stdout)) execMs.push(performance.now() - a);
      else {
        const why = r.status === 200 ? `exit ${r.body.exit_code}` : `${r.status} ${r.body?.error?.code}`;
        execFailures.set(why, (execFailures.get(why) ?? 0) + 1);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  });

  const readMs: number[] = [];
  const KINDS = ['GET /sandboxes/{id}', 'GET /sandboxes?limit=20', 'GET /info', 'GET /sandboxes/{id}/metrics'];
  const byKind = KINDS.map(() => [] as number[]);
  const statuses = new Map<string, number>();
  let sent = 0;
  let inFlight = 0;
  const paths = (n: number) => [`/sandboxes/${ids[n % ids.length]}`, '/sandboxes?limit=20', '/info', `/sandboxes/${ids[(n * 7) % ids.length]}/metrics`][n % 4]!;
  const agent = new Agent({ keepAlive: true, maxSockets: READ_CONNECTIONS });
  const url = new URL(server.url);
  const getStatus = (path: string, key: string) =>
    new Promise<number>((resolve) => {
      const req = get({ host: url.hostname, port: url.port, path, agent, headers: { 'x-api-key': key } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', () => resolve(0));
    });
  const read = async (n: number) => {
    inFlight++;
    const a = performance.now();
    const status = await getStatus(paths(n), keys[n % KEYS]!.key!);
    inFlight--;
    readMs.push(performance.now() - a);
    byKind[n % 4]!.push(performance.now() - a);
    statuses.set(String(status), (statuses.get(String(status)) ?? 0) + 1);
  };
  // Scraping resets the server's event-loop delay histogram: the figures printed below cover the reads only.
  await fetch(`${server.url}/metrics`).then((r) => r.text());
  const cpuAtStart = cpuSeconds(server.pid!);
  // Open loop: every 10 ms the reads due by then are sent, whatever is still in flight.
  const start = performance.now();
  const pending: Promise<void>[] = [];
  let maxInFlight = 0;
  while (performance.now() - start < SECONDS * 1000) {
    const due = Math.floor(((performance.now() - start) / 1000) * RPS);
    while (sent < due) pending.push(read(sent++));
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, 10));
  }
  const sendWindow = (performance.now() - start) / 1000;
  await Promise.all(pending);
  const elapsed = (performance.now() - start) / 1000;
  const serverCpu = cpuSeconds(server.pid!) - cpuAtStart;
  running = false;
  await Promise.all(workers);
  agent.destroy();

  const ok = statuses.get('200') ?? 0;
  console.log(`\n== ${SANDBOXES} sandboxes working, reads at ${RPS}/s offered for ${SECONDS} s (${DRIVER})`);
  console.log(`reads sent ${sent} in ${sendWindow.toFixed(1)} s; answered 200: ${ok}; achieved ${(ok / elapsed).toFixed(0)} req/s (all answered by ${elapsed.toFixed(1)} s)`);
  console.log(`read latency p50 ${median(readMs).toFixed(1)} ms   p99 ${percentile(readMs, 99).toFixed(1)} ms   max ${Math.max(...readMs).toFixed(0)} ms   most in flight ${maxInFlight}`);
  for (const [k, xs] of byKind.entries()) console.log(`  ${KINDS[k]!.padEnd(28)} p50 ${median(xs).toFixed(1)} ms   p99 ${percentile(xs, 99).toFixed(1)} ms`);
  console.log(`read answers by status: ${JSON.stringify(Object.fromEntries(statuses))}`);
  const prom = await (await fetch(`${server.url}/metrics`)).text();
  const lag = (q: string) => Number(new RegExp(`^sandpit_process_nodejs_eventloop_lag_${q}_seconds (\\S+)$`, 'm').exec(prom)?.[1] ?? Number.NaN) * 1000;
  console.log(`server event-loop delay during the reads: p50 ${lag('p50').toFixed(1)} ms   p99 ${lag('p99').toFixed(1)} ms   max ${lag('max').toFixed(0)} ms`);
  console.log(
    `server CPU during the reads: ${serverCpu.toFixed(1)} s in ${elapsed.toFixed(1)} s (${((100 * serverCpu) / elapsed).toFixed(0)} % of one core), ${((1000 * serverCpu) / Math.max(1, ok)).toFixed(2)} ms per read with the execs below`,
  );
  const execTotal = execMs.length + [...execFailures.values()].reduce((a, b) => a + b, 0);
  console.log(
    `execs ${execTotal}: succeeded ${execMs.length} (${((100 * execMs.length) / Math.max(1, execTotal)).toFixed(2)} %), p50 ${median(execMs).toFixed(0)} ms, p99 ${percentile(execMs, 99).toFixed(0)} ms; failures ${JSON.stringify(Object.fromEntries(execFailures))}`,
  );
  const health = await admin.get('/info');
  console.log(`server answering after the run: ${health.status}`);
} finally {
  await server.stop();
}
