/**
 * Issue 3 benchmark: a fleet of paused gVisor sandboxes held on one machine (disk only, no memory).
 * Through a real server on the gvisor driver: creates BENCH_SANDBOXES sandboxes (default 1000),
 * gives each a counter process and a tag file, pauses each (`runsc checkpoint` to disk), then
 * prints host memory before / at peak / all paused, the runsc processes left while paused, disk
 * per sandbox, create / pause / resume medians, whether a random sample continued where it was
 * paused, and what is left after deleting all. Prints; asserts nothing.
 * Issue 27 item 4, with the fleet paused: BENCH_ACTIVE (default a tenth of the fleet, at most 100) more
 * sandboxes stay active while a command loop runs `true` in them; meanwhile the list is timed (first
 * page, every page), the sample's resumes are timed against resumes on the same host before the fleet
 * existed, and the server is killed and started again on the same data directory (its start-up time).
 * Run: BENCH_SANDBOXES=1000 node bench/paused-fleet.bench.ts (about 11 minutes on 2 cores; `./sandpit bench` runs 50 unless BENCH_SANDBOXES is set).
 * BENCH_PARALLEL (default 4) requests at a time; BENCH_RESUME_SAMPLE (default 20) sandboxes resumed.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Api, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, report, timeIt } from './stats.ts';

const run = promisify(execFile);
const N = Number(process.env.BENCH_SANDBOXES ?? 1000);
const PARALLEL = Number(process.env.BENCH_PARALLEL ?? 4);
const SAMPLE = Math.min(N, Number(process.env.BENCH_RESUME_SAMPLE ?? 20));
const ACTIVE = Number(process.env.BENCH_ACTIVE ?? Math.min(100, Math.round(N / 10)));
/** Resumes timed on the host before the fleet exists: what a resume at the fleet's size is compared with. */
const EMPTY_RESUMES = 5;
const MEMORY_CGROUPS = '/sys/fs/cgroup/memory/sandpit';

/**
 * The sandbox's distinct state: a tag file, and a counter whose value lives only in the shell's
 * memory (it writes the file, never reads it), so a resumed sandbox showing a higher count from
 * the same pid proves its processes continued rather than restarted. The seed returns once the
 * first count is written, and counts are renamed into place: a reader never finds the file empty.
 */
const seed = (i: number) =>
  `echo fleet-${i} > /tmp/fleet-tag; sh -c 'n=0; while :; do n=$((n+1)); echo $n > /tmp/fleet-count.new; mv /tmp/fleet-count.new /tmp/fleet-count; sleep 1; done' </dev/null >/dev/null 2>&1 & echo $! > /tmp/fleet-pid; until [ -s /tmp/fleet-count ]; do sleep 0.05; done`;
const READ = 'cat /tmp/fleet-tag /tmp/fleet-count /tmp/fleet-pid && kill -0 "$(cat /tmp/fleet-pid)" && echo alive';

interface Probe {
  tag: string;
  count: number;
  pid: number;
  alive: boolean;
}

function parseProbe(stdout: string): Probe {
  const [tag = '', count = '', pid = '', alive = ''] = stdout.trim().split('\n');
  return { tag, count: Number(count), pid: Number(pid), alive: alive === 'alive' };
}

const uuidOf = (id: string) => id.slice(-36);

async function meminfo(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of (await readFile('/proc/meminfo', 'utf8')).matchAll(/^(\w+):\s+(\d+) kB$/gm)) out[m[1]!] = Number(m[2]) / 1024;
  return out;
}

async function memAvailableMiB(): Promise<number> {
  return (await meminfo()).MemAvailable ?? 0;
}

/** Where host memory went between two reads: anonymous and kernel memory (what a paused sandbox could still hold), and caches. */
const MEMINFO_PARTS = ['AnonPages', 'Shmem', 'SUnreclaim', 'SReclaimable', 'Percpu', 'KernelStack', 'PageTables', 'Cached', 'Buffers'];
const memDelta = (a: Record<string, number>, b: Record<string, number>) => MEMINFO_PARTS.map((k) => `${k} ${((b[k] ?? 0) - (a[k] ?? 0)).toFixed(0)}`).join(', ');

async function rssMiB(pid: number | undefined): Promise<number> {
  const m = /VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''));
  return Number(m?.[1] ?? 0) / 1024;
}

/** Memory charged to this run's sandboxes: their cgroups are named after the runsc container (`<uuid>[-<run>]`). */
async function cgroupMiB(ours: Set<string>): Promise<{ groups: number; mib: number }> {
  let groups = 0;
  let bytes = 0;
  for (const name of await readdir(MEMORY_CGROUPS).catch(() => [] as string[])) {
    if (!ours.has(name.slice(0, 36))) continue;
    groups++;
    bytes += Number((await readFile(join(MEMORY_CGROUPS, name, 'memory.usage_in_bytes'), 'utf8').catch(() => '0')).trim()) || 0;
  }
  return { groups, mib: bytes / 1024 / 1024 };
}

/** Processes whose command line names the data dir: runsc sandboxes (sentries), gofers, checkpoint shells. */
async function engineProcesses(dataDir: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmd = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (cmd.some((a) => a.includes(dataDir))) found.push(`${pid} ${cmd[0]}`);
  }
  return found;
}

async function openFds(pid: number | undefined): Promise<number> {
  return (await readdir(`/proc/${pid}/fd`).catch(() => [])).length;
}

const ourNamespaces = async (installation: string) => (await readdir('/run/netns').catch(() => [] as string[])).filter((n) => n.startsWith(`sandpit-${installation}-`)).length;

async function duBytes(path: string, oneFs: boolean): Promise<number> {
  const { stdout } = await run('du', [oneFs ? '-sxB1' : '-sB1', path]).catch(() => ({ stdout: '0' }));
  return Number(stdout.split('\t')[0]);
}

/** What the data dir costs the host (the layer store is a sparse image: its allocated blocks) and what is inside the store. */
async function disk(dataDir: string): Promise<{ host: number; images: number; store: number }> {
  const layers = join(dataDir, 'gvisor', 'layers');
  // Written blocks reach the store's image file only on a btrfs commit and its host file system's writeback.
  await run('sync', ['-f', layers]).catch(() => undefined);
  await run('sync', [join(dataDir, 'gvisor', 'layers.img')]).catch(() => undefined);
  // -x on the data dir skips the mounted store (counted as its image file's blocks); inside the store, layers are subvolumes (other st_dev), so no -x.
  const [host, images, store] = await Promise.all([duBytes(dataDir, true), duBytes(join(dataDir, 'gvisor', 'checkpoints'), false), duBytes(layers, false)]);
  return { host, images, store };
}

/** Lowest MemAvailable, highest sandbox cgroup total and server RSS, sampled while the fleet is built. */
class Peak {
  memAvailable = Infinity;
  cgroups = 0;
  rss = 0;
  #timer: NodeJS.Timeout | undefined;
  #busy = false;

  start(ours: Set<string>, serverPid: number | undefined): void {
    this.#timer = setInterval(async () => {
      if (this.#busy) return;
      this.#busy = true;
      try {
        const [mem, cg, rss] = await Promise.all([memAvailableMiB(), cgroupMiB(ours), rssMiB(serverPid)]);
        this.memAvailable = Math.min(this.memAvailable, mem);
        this.cgroups = Math.max(this.cgroups, cg.mib);
        this.rss = Math.max(this.rss, rss);
      } finally {
        this.#busy = false;
      }
    }, 500);
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/** Runs fn over 0..n-1, `PARALLEL` at a time; after a failure no new item starts, and it throws once all workers stopped. */
async function pool(n: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const workers = await Promise.allSettled(
    Array.from({ length: Math.min(PARALLEL, n) }, async () => {
      try {
        while (next < n && !failed) await fn(next++);
      } catch (err) {
        failed = true;
        throw err;
      }
    }),
  );
  const err = workers.find((w) => w.status === 'rejected');
  if (err) throw err.reason;
}

/** `true` in each sandbox in turn, `PARALLEL` at a time, until stopped: the active part of the fleet at work. */
class CommandLoop {
  readonly latency: number[] = [];
  readonly failures: string[] = [];
  #stopped = false;
  #workers: Promise<void>[] = [];

  start(ids: string[], exec: (id: string) => Promise<unknown>): void {
    let next = 0;
    this.#workers = Array.from({ length: Math.min(PARALLEL, ids.length) }, async () => {
      while (!this.#stopped) {
        const id = ids[next++ % ids.length]!;
        try {
          this.latency.push(await timeIt(() => exec(id)));
        } catch (err) {
          this.failures.push(`${id}: ${(err as Error).message}`);
        }
      }
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#workers);
  }
}

/** Every sandbox of the list, walked 1000 a page. */
async function countAll(api: Api): Promise<number> {
  let n = 0;
  for (let cursor: string | undefined; ; ) {
    const page = (await api.get(`/sandboxes?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body;
    n += page.sandboxes.length;
    cursor = page.next_cursor ?? undefined;
    if (!cursor) return n;
  }
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const line = (name: string, value: string) => console.log(`${name.padEnd(44)} ${value}`);

async function main(): Promise<void> {
  const srv = await ServerProcess.start({
    SANDPIT_DRIVER: 'gvisor',
    SANDPIT_RATE_LIMIT: '0',
    SANDPIT_MAX_ACTIVE_SANDBOXES: String(N + 10),
  });
  const api = new Api(srv.url, srv.key);
  const call = async (method: 'post' | 'del', path: string, body?: unknown) => {
    const r = method === 'post' ? await api.post(path, body) : await api.del(path);
    if (r.status >= 300) throw Object.assign(new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`), { status: r.status });
    return r.body;
  };
  const exec = async (id: string, command: string) => {
    const r = await call('post', `/sandboxes/${id}/exec`, { command });
    if (r.exit_code !== 0) throw new Error(`exec in ${id} exited ${r.exit_code}: ${r.stderr}`);
    return r.stdout as string;
  };
  const dataDir = await realpath(srv.dataDir);
  const installation = createHash('sha256').update(dataDir).digest('hex').slice(0, 8);
  // runsc containers in the state root of every runsc build (what `runsc list` reads).
  const gvisorDir = join(dataDir, 'gvisor');
  const runscContainers = async () => {
    const roots = (await readdir(gvisorDir)).filter((d) => d.startsWith('runsc')).map((d) => join(gvisorDir, d));
    return (await Promise.all(roots.map((r) => readdir(r)))).flat().filter((f) => f.endsWith('.state'));
  };
  const peak = new Peak();
  try {
    console.log(`Sandpit paused-fleet benchmark (driver gvisor, ${N} sandboxes, ${PARALLEL} at a time; other work on this host counts in host numbers)\n`);
    const infoBefore = await meminfo();
    const memBefore = infoBefore.MemAvailable ?? 0;
    const fdsBefore = await openFds(srv.pid);
    const rssBefore = await rssMiB(srv.pid);
    const diskBefore = await disk(dataDir);

    const resumeEmpty: number[] = [];
    for (let i = 0; i < EMPTY_RESUMES; i++) {
      const id = (await call('post', '/sandboxes', {})).id as string;
      await exec(id, seed(-1 - i));
      await call('post', `/sandboxes/${id}/pause`);
      // As in the sample below: the saved run is gone before the resume.
      await sleep(3000);
      resumeEmpty.push(await timeIt(() => call('post', `/sandboxes/${id}/resume`)));
      await call('del', `/sandboxes/${id}`);
    }

    const ids: string[] = new Array(N);
    const at = new Map<string, Probe>();
    const ours = new Set<string>();
    const create: number[] = [];
    const firstExec: number[] = [];
    const pause: number[] = [];
    let refused = 0;
    const lost: string[] = [];
    let paused = 0;
    const t0 = performance.now();
    peak.start(ours, srv.pid);
    await pool(N, async (i) => {
      let id = '';
      create.push(await timeIt(async () => (id = (await call('post', '/sandboxes', {})).id)));
      ids[i] = id;
      ours.add(uuidOf(id));
      firstExec.push(await timeIt(() => exec(id, seed(i))));
      // Read just before the pause: what the resumed sandbox must continue from.
      at.set(id, parseProbe(await exec(id, READ)));
      for (let tries = 1; ; tries++) {
        try {
          pause.push(await timeIt(() => call('post', `/sandboxes/${id}/pause`)));
          break;
        } catch (err) {
          // 409: gVisor would refuse the save (a connection closing); the sandbox keeps running, try again.
          const status = (err as { status?: number }).status;
          if (status === 409 && tries < 3) {
            refused++;
            await sleep(1000);
            continue;
          }
          // 500: the save took the sandbox down (it is failed); counted, and the fleet goes on without it.
          if (status !== 500) throw err;
          lost.push((err as Error).message);
          break;
        }
      }
      const done = ++paused;
      if (done % 50 === 0 || done === N) {
        const { host } = await disk(dataDir);
        console.error(`  ${done}/${N} paused, ${((performance.now() - t0) / 1000).toFixed(0)} s, MemAvailable ${(await memAvailableMiB()).toFixed(0)} MiB, data dir ${mib(host)}`);
      }
    });
    peak.stop();
    const buildS = (performance.now() - t0) / 1000;

    // The saved runsc containers are deleted in the background (runsc delete waits ~1.5 s each): wait for the last ones.
    const settle = performance.now();
    let procs = await engineProcesses(dataDir);
    while (procs.length > 0 && performance.now() - settle < 60_000) {
      await sleep(500);
      procs = await engineProcesses(dataDir);
    }
    const settleS = (performance.now() - settle) / 1000;
    await sleep(2000);
    const infoPaused = await meminfo();
    const memPaused = infoPaused.MemAvailable ?? 0;
    const rssPaused = await rssMiB(srv.pid);
    const fdsPaused = await openFds(srv.pid);
    const netnsPaused = await ourNamespaces(installation);
    const cgPaused = await cgroupMiB(ours);
    const runscLeft = await runscContainers();
    const listed = (await api.get('/sandboxes?limit=1000&status=paused')).body.sandboxes.length as number;
    const diskPaused = await disk(dataDir);

    // The active part: more sandboxes, left running, with a command loop in them from here to the restart.
    const activeIds: string[] = new Array(ACTIVE);
    await pool(ACTIVE, async (i) => {
      activeIds[i] = (await call('post', '/sandboxes', {})).id;
    });
    const loop = new CommandLoop();
    loop.start(activeIds, (id) => exec(id, 'true'));
    const listFirst: number[] = [];
    const listAll: number[] = [];
    let listedAll = 0;
    for (let i = 0; i < 10; i++) listFirst.push(await timeIt(() => api.get('/sandboxes?limit=100')));
    for (let i = 0; i < 3; i++) listAll.push(await timeIt(async () => (listedAll = await countAll(api))));

    // A random sample: resume, read, and read again a moment later (the counter must have moved on).
    const pausedIds = ids.filter((id) => !lost.some((m) => m.includes(id)));
    const sample = [...pausedIds].sort(() => Math.random() - 0.5).slice(0, SAMPLE);
    const resume: number[] = [];
    const resumeExec: number[] = [];
    const after = new Map<string, Probe>();
    for (const id of sample) {
      resume.push(await timeIt(() => call('post', `/sandboxes/${id}/resume`)));
      resumeExec.push(await timeIt(async () => after.set(id, parseProbe(await exec(id, READ)))));
    }
    await sleep(2500);
    const failures: string[] = [];
    for (const id of sample) {
      const [a, b, c] = [at.get(id)!, after.get(id)!, parseProbe(await exec(id, READ))];
      const i = ids.indexOf(id);
      const ok = a.tag === `fleet-${i}` && b.tag === a.tag && c.tag === a.tag && b.pid === a.pid && c.pid === a.pid && b.alive && c.alive && b.count >= a.count && c.count > b.count;
      if (!ok) failures.push(`${id}: paused at ${JSON.stringify(a)}, after resume ${JSON.stringify(b)}, 2.5 s later ${JSON.stringify(c)}`);
    }

    await loop.stop();
    // The service's start-up with the whole fleet in its store: killed (no shutdown path), started on the same data dir.
    await srv.kill9();
    const restart = await timeIt(() => srv.launch());
    const afterRestart = {
      listed: await countAll(api),
      activeAnswers: (await Promise.all(activeIds.slice(0, 10).map((id) => exec(id, 'echo ok').catch(() => '')))).filter((o) => o.trim() === 'ok').length,
    };
    await pool(ACTIVE, async (i) => {
      await call('del', `/sandboxes/${activeIds[i]}`);
    });

    // Running and paused sandboxes are torn down differently (runsc delete waits for the sentry): timed apart.
    const delResumed: number[] = [];
    for (const id of sample) delResumed.push(await timeIt(() => call('del', `/sandboxes/${id}`)));
    const rest = ids.filter((id) => !sample.includes(id));
    const del: number[] = [];
    await pool(rest.length, async (i) => {
      del.push(await timeIt(() => call('del', `/sandboxes/${rest[i]}`)));
    });
    const leftNow = async () => ({
      runsc: (await runscContainers()).length,
      processes: (await engineProcesses(dataDir)).length,
      cgroups: (await cgroupMiB(ours)).groups,
      sandboxDirs: (await readdir(join(dataDir, 'gvisor', 'sandboxes'))).length,
      checkpoints: (await readdir(join(dataDir, 'gvisor', 'checkpoints')).catch(() => [])).length,
      layers: (await readdir(join(dataDir, 'gvisor', 'layers'))).filter((n) => !n.startsWith('.')).length,
      // Veths of sandboxes carry their id in the alias; spares (SANDPIT_NET_WARM) carry none.
      assignedVeths: (await run('ip', ['-j', 'link', 'show'], { maxBuffer: 64 << 20 })).stdout.split(`"sandpit:${installation}:`).length - 1,
      namespaces: await ourNamespaces(installation),
    });
    // A delete answers before the engine's teardown ends (issue 22): wait for the teardowns.
    let left = await leftNow();
    for (const end = Date.now() + 300_000; left.runsc + left.processes + left.sandboxDirs > 0 && Date.now() < end; left = await leftNow()) await sleep(1000);
    const diskDeleted = await disk(dataDir);

    const perSandbox = (bytes: number) => mib(bytes / N);
    line('fleet built (create + seed + pause)', `${buildS.toFixed(0)} s for ${N} (${(N / buildS).toFixed(2)} sandboxes/s); ${refused} pauses refused and retried`);
    line('pauses that took the sandbox down', `${lost.length}${lost.length ? `\n  ${lost.slice(0, 5).join('\n  ')}` : ''}`);
    report('create (POST /sandboxes)', create);
    report('first exec (seed the state)', firstExec);
    report('pause (runsc checkpoint)', pause);
    report('resume (runsc restore), random sample', resume);
    report('resume on the same host before the fleet', resumeEmpty);
    line('resume at this size / before the fleet', `${(median(resume) / median(resumeEmpty)).toFixed(2)}x (target at most 2x)`);
    report(`list, first page of 100 (${N} paused, ${ACTIVE} active)`, listFirst);
    report(`list, every page of 1000 (${listedAll} sandboxes)`, listAll);
    report(`exec true in ${ACTIVE} active sandboxes, ${PARALLEL} at a time`, loop.latency);
    line('  command loop failures', `${loop.failures.length} of ${loop.latency.length + loop.failures.length}${loop.failures.length ? `\n  ${loop.failures.slice(0, 5).join('\n  ')}` : ''}`);
    line(
      'service start-up after a kill, same data dir',
      `${(restart / 1000).toFixed(1)} s with ${N} paused and ${ACTIVE} active (target at most 30 s); then ${afterRestart.listed} listed, ${afterRestart.activeAnswers}/${Math.min(10, ACTIVE)} active answered`,
    );
    report('first exec after resume', resumeExec);
    if (del.length > 0) report('delete (paused)', del);
    report('delete (resumed, running)', delResumed);
    line('host MemAvailable before creating', `${memBefore.toFixed(0)} MiB`);
    const used = (mem: number) => `${(memBefore - mem).toFixed(0)} MiB`;
    line('host MemAvailable at lowest', `${peak.memAvailable.toFixed(0)} MiB (used ${used(peak.memAvailable)})`);
    line('host MemAvailable with all paused', `${memPaused.toFixed(0)} MiB (used ${used(memPaused)}, ${((memBefore - memPaused) / N).toFixed(2)} MiB per sandbox)`);
    line('  of which (MiB, all paused minus before)', memDelta(infoBefore, infoPaused));
    line('sandbox cgroups: peak / all paused', `${peak.cgroups.toFixed(0)} MiB / ${cgPaused.mib.toFixed(0)} MiB in ${cgPaused.groups} groups`);
    line('server RSS: before / peak / all paused', `${rssBefore.toFixed(0)} / ${peak.rss.toFixed(0)} / ${rssPaused.toFixed(0)} MiB`);
    line('server open fds: before / all paused', `${fdsBefore} / ${fdsPaused}`);
    line('network namespaces held while all paused', `${netnsPaused} (one per sandbox, plus spares)`);
    line(
      'runsc processes while all paused',
      `${procs.length} (settled ${settleS.toFixed(1)} s after the last pause); runsc list: ${runscLeft.length}; API: ${listed} paused${procs.length ? `\n  ${procs.slice(0, 5).join('\n  ')}` : ''}`,
    );
    line('disk: data dir on the host', `${mib(diskPaused.host)} (${mib(diskPaused.host - diskBefore.host)} for the fleet, ${perSandbox(diskPaused.host - diskBefore.host)} per sandbox)`);
    line('disk: checkpoint images', `${mib(diskPaused.images)} (${perSandbox(diskPaused.images)} per sandbox)`);
    line('disk: layer store contents', `${mib(diskPaused.store)} (${perSandbox(diskPaused.store - diskBefore.store)} per sandbox)`);
    line('disk: data dir after deleting all', `${mib(diskDeleted.host)} (sparse image keeps freed blocks until trimmed); store contents ${mib(diskDeleted.store)}`);
    line('resumed sample continued', `${sample.length - failures.length}/${sample.length}${failures.length ? `\n  ${failures.join('\n  ')}` : ''}`);
    line('left after deleting all', JSON.stringify(left));
    console.log(
      `\nmedian summary: create ${median(create).toFixed(0)} ms, pause ${median(pause).toFixed(0)} ms, resume ${median(resume).toFixed(0)} ms, ${perSandbox(diskPaused.host - diskBefore.host)} of disk per paused sandbox`,
    );
  } catch (err) {
    console.error(`server output (tail):\n${srv.output.slice(-4000)}`);
    throw err;
  } finally {
    peak.stop();
    await srv.stop();
    const namespaces = await ourNamespaces(installation);
    const mounts = (await readFile('/proc/self/mountinfo', 'utf8')).split('\n').filter((l) => l.includes(dataDir)).length;
    const dirGone = await stat(dataDir).then(
      () => false,
      () => true,
    );
    line('after server stop', `namespaces ${namespaces}, mounts ${mounts}, data dir removed: ${dirGone}`);
  }
}

await main();
