/**
 * Issue 11 item 7: create -> first command (`node -v`) succeeds, as the public ComputeSDK sandbox
 * benchmark measures it: sequentially, then as a burst of concurrent creates, through a real server,
 * next to the raw engine's start of the same root in the same run. Prints medians and p95; asserts nothing.
 *
 *   node bench/burst-create.bench.ts     BENCH_DRIVER=container|gvisor (default both),
 *   BENCH_SEQUENTIAL (default 10), BENCH_BURST (default 50 for container, 30 for gvisor);
 *   gVisor's build and platform: SANDPIT_RUNSC, SANDPIT_RUNSC_PLATFORM (the server's defaults when unset)
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SETTINGS } from '../packages/server/src/config.ts';
import { defaultRunsc } from '../packages/server/src/runtime/gvisor/engines.ts';
import { ensureBaseTemplate } from '../packages/server/src/templates/base-template.ts';
import { Api, IMAGE_DIR, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, percentile, sample } from './stats.ts';

const run = promisify(execFile);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 10);
const DRIVERS = process.env.BENCH_DRIVER ? [process.env.BENCH_DRIVER] : ['container', 'gvisor'];

/** The raw engine (the runsc build and platform the server uses) running /bin/true on the template root (read-only), one at a time. */
async function rawStart(driver: string, rootfs: string): Promise<number[]> {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-bench-raw-'));
  const platform = process.env.SANDPIT_RUNSC_PLATFORM || SETTINGS.SANDPIT_RUNSC_PLATFORM.default;
  const [bin, flags] = driver === 'gvisor' ? [process.env.SANDPIT_RUNSC || (await defaultRunsc()), [`--platform=${platform}`, '--network=none']] : ['crun', []];
  try {
    await run(bin, ['spec', ...(driver === 'gvisor' ? ['--bundle', dir] : [])], { cwd: dir });
    const spec = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
    spec.process.terminal = false;
    spec.process.args = ['/bin/true'];
    spec.root = { path: rootfs, readonly: true };
    await writeFile(join(dir, 'config.json'), JSON.stringify(spec));
    let i = 0;
    return await sample(SEQUENTIAL, () => run(bin, ['--root', join(dir, 'state'), ...flags, 'run', '--bundle', dir, `bench-${process.pid}-${i++}`]));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One create -> `node -v`; the time in ms, or the error. */
async function createThenNode(api: Api, ids: string[]): Promise<number | Error> {
  const t0 = performance.now();
  const sb = await api.post('/sandboxes', {});
  if (sb.status !== 201) return new Error(`create ${sb.status}: ${JSON.stringify(sb.body)}`);
  ids.push(sb.body.id);
  const ex = await api.post(`/sandboxes/${sb.body.id}/exec`, { command: 'node -v' });
  if (ex.status !== 200 || ex.body.exit_code !== 0) return new Error(`node -v: ${JSON.stringify(ex.body)}`);
  return performance.now() - t0;
}

function line(name: string, xs: number[], failures: number): void {
  console.log(`${name.padEnd(40)} median ${median(xs).toFixed(0).padStart(6)} ms   p95 ${percentile(xs, 95).toFixed(0).padStart(6)} ms   n=${xs.length}   failures ${failures}`);
}

async function clean(api: Api, ids: string[]): Promise<void> {
  for (const id of ids.splice(0)) await api.del(`/sandboxes/${id}`);
}

const rootfs = await ensureBaseTemplate(IMAGE_DIR);
for (const driver of DRIVERS) {
  const burst = Number(process.env.BENCH_BURST ?? (driver === 'gvisor' ? 30 : 50));
  // The platform's own default, not the test servers' 2 spare namespaces.
  const server = await ServerProcess.start({ SANDPIT_DRIVER: driver, SANDPIT_RATE_LIMIT: '0', SANDPIT_MAX_ACTIVE_SANDBOXES: '1000', SANDPIT_NET_WARM: SETTINGS.SANDPIT_NET_WARM.default });
  try {
    const api = new Api(server.url, server.key);
    const ids: string[] = [];
    const probe = await createThenNode(api, ids);
    await clean(api, ids);
    const engine = driver === 'gvisor' ? ` (runsc ${process.env.SANDPIT_RUNSC || (await defaultRunsc())}, ${process.env.SANDPIT_RUNSC_PLATFORM || SETTINGS.SANDPIT_RUNSC_PLATFORM.default})` : '';
    console.log(`\n== ${driver}${engine}: node -v is ${probe instanceof Error ? probe.message : 'ok'}`);
    const raw = await rawStart(driver, rootfs);
    console.log(`${`raw ${driver === 'gvisor' ? 'runsc' : 'crun'} run /bin/true`.padEnd(40)} median ${median(raw).toFixed(0).padStart(6)} ms   p95 ${percentile(raw, 95).toFixed(0).padStart(6)} ms`);
    const seq: number[] = [];
    let seqFail = 0;
    for (let i = 0; i < SEQUENTIAL; i++) {
      const r = await createThenNode(api, ids);
      if (r instanceof Error) seqFail++;
      else seq.push(r);
    }
    line('sequential create -> node -v', seq, seqFail);
    await clean(api, ids);
    const results = await Promise.all(Array.from({ length: burst }, () => createThenNode(api, ids)));
    const ok = results.filter((r): r is number => typeof r === 'number');
    const errors = results.filter((r): r is Error => r instanceof Error);
    line(`burst of ${burst}: create -> node -v`, ok, errors.length);
    if (errors.length) console.log(`  first failure: ${errors[0]!.message.slice(0, 300)}`);
    console.log(`${'burst median / raw start median'.padEnd(40)} ${(median(ok) / median(raw)).toFixed(1)}x`);
    await clean(api, ids);
  } finally {
    await server.stop();
  }
}
