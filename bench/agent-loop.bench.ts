/**
 * An agent's loop, per engine setting, through a real server: create -> first exec, exec round trips
 * on the control and data planes, a small file's upload and download, pause, resume, a pause keeping only
 * the disk and the boot that resumes it, delete,
 * create -> `node -v` one at a time (cold, and from the default warm pool) and in a burst, syscall-heavy work
 * inside (stat() in a loop; copying and removing a tree of small files, as an install does) and the CPU an idle
 * sandbox's engine takes; next to the raw engine (`crun run /bin/true`,
 * `runsc run /bin/true` of the same build and platform) timed in the same run. Prints medians (p95
 * where the goal names one); asserts nothing.
 * Run: ./sandpit bench bench/agent-loop.bench.ts (BENCH_RUNS, default 10; BENCH_BURST, default 100;
 * BENCH_ENGINES, default container,gvisor:systrap,gvisor:ptrace; `@2` after a gVisor engine boots it on at
 * least two CPUs (SANDPIT_GVISOR_MIN_CPUS); BENCH_LOAD, busy loops kept running on the host, default 0).
 */
import { defaultRunsc } from '../packages/server/src/runtime/gvisor/engines.ts';
import { ensureBaseTemplate } from '../packages/server/src/templates/base-template.ts';
import { Api, IMAGE_DIR, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { busyLoops } from './host-load.ts';
import { cpuOf } from './process-cpu.ts';
import { rawCrunTrue, rawRunscTrue } from './raw-engines.ts';
import { median, percentile, timeIt } from './stats.ts';

const N = Number(process.env.BENCH_RUNS ?? 10);
const BURST = Number(process.env.BENCH_BURST ?? 100);
const ENGINES = (process.env.BENCH_ENGINES ?? 'container,gvisor:systrap,gvisor:ptrace').split(',');
/** How long the warm pool is given to refill between two creates that take from it. */
const WARM_REFILL_MS = 2000;
const LOAD = Number(process.env.BENCH_LOAD ?? 0);
const IDLE_SECONDS = 10;
/** Work an agent's installs and builds are made of, timed inside one sandbox. */
const WORK: [string, string][] = [
  ['100,000 stat() in python3', `python3 -c 'import os\nfor _ in range(100000): os.stat("/")'`],
  ['copy and remove the Python stdlib tree', `d=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])') && cp -a "$d" /tmp/w && rm -rf /tmp/w`],
];

interface Row {
  engine: string;
  raw: number[];
  figures: Map<string, number[]>;
  burstFailures: number;
}

async function measure(engine: string, rootfs: string, runsc: string): Promise<Row> {
  const [setting, cpus] = engine.split('@') as [string, string | undefined];
  const [driver, platform] = setting.split(':') as [string, string | undefined];
  const raw = driver === 'container' ? await rawCrunTrue(rootfs, N) : await rawRunscTrue(runsc, platform ?? 'systrap', rootfs, N);
  const settings = { SANDPIT_DRIVER: driver, ...(platform ? { SANDPIT_RUNSC_PLATFORM: platform } : {}), ...(cpus ? { SANDPIT_GVISOR_MIN_CPUS: cpus } : {}) };
  const srv = await ServerProcess.start({
    ...settings,
    SANDPIT_RATE_LIMIT: '0',
    SANDPIT_MAX_ACTIVE_SANDBOXES: String(BURST + N + 10),
    SANDPIT_NET_WARM: '32',
  });
  const api = new Api(srv.url, srv.key);
  const figures = new Map<string, number[]>();
  const add = (name: string, ms: number) => figures.set(name, [...(figures.get(name) ?? []), ms]);
  const create = async (): Promise<{ id: string; access_token: string }> => {
    const res = await api.post('/sandboxes', {});
    if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const exec = async (id: string, command: string): Promise<void> => {
    const res = await api.post(`/sandboxes/${id}/exec`, { command });
    if (res.status !== 200 || res.body.exit_code !== 0) throw new Error(`exec ${command}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  let burstFailures = 0;
  try {
    for (let i = 0; i < N; i++) {
      let sb: { id: string; access_token: string } | undefined;
      add(
        'create -> exec `true`',
        await timeIt(async () => {
          sb = await create();
          await exec(sb.id, 'true');
        }),
      );
      const { id, access_token } = sb!;
      const dp = { 'x-platform-sandbox-id': id, 'x-access-token': access_token };
      for (let j = 0; j < N; j++) add('exec `true`, control plane', await timeIt(() => exec(id, 'true')));
      for (let j = 0; j < N; j++) {
        add(
          'exec `true`, data plane',
          await timeIt(async () => {
            const res = await api.post('/exec', { command: 'true' }, dp);
            if (res.status !== 200) throw new Error(`data-plane exec: ${res.status}`);
          }),
        );
      }
      const body = Buffer.alloc(1024, 'x');
      for (let j = 0; j < N; j++) {
        add(
          'upload 1 KiB, data plane',
          await timeIt(async () => {
            const res = await fetch(`${srv.url}/files?path=/tmp/f${j}`, { method: 'PUT', headers: { ...dp, 'content-type': 'application/octet-stream' }, body });
            await res.arrayBuffer();
            if (res.status !== 200) throw new Error(`upload: ${res.status}`);
          }),
        );
        add(
          'download 1 KiB, data plane',
          await timeIt(async () => {
            const res = await fetch(`${srv.url}/files?path=/tmp/f${j}`, { headers: dp });
            if ((await res.arrayBuffer()).byteLength !== body.length) throw new Error(`download: ${res.status}`);
          }),
        );
      }
      add('pause', await timeIt(() => api.post(`/sandboxes/${id}/pause`)));
      add('resume', await timeIt(() => api.post(`/sandboxes/${id}/resume`)));
      add('pause keeping only the disk', await timeIt(() => api.post(`/sandboxes/${id}/pause`, { keep_memory: false })));
      add(
        'resume by a boot -> exec `true`',
        await timeIt(async () => {
          await api.post(`/sandboxes/${id}/resume`);
          await exec(id, 'true');
        }),
      );
      add('delete (answer)', await timeIt(() => api.del(`/sandboxes/${id}`)));
    }
    const { id } = await create();
    for (const [name, command] of WORK) for (let i = 0; i < 3; i++) add(name, await timeIt(() => exec(id, command)));
    await new Promise((r) => setTimeout(r, 3000));
    // The engine's command lines name the sandbox by its id's UUID.
    const uuid = id.slice(-36);
    const cpu0 = await cpuOf(uuid);
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    add(`idle sandbox: engine CPU, ms per s`, ((await cpuOf(uuid)) - cpu0) * (1000 / IDLE_SECONDS));
    await api.del(`/sandboxes/${id}`);
    for (let i = 0; i < N; i++) {
      let id = '';
      add(
        'create -> `node -v`, one at a time',
        await timeIt(async () => {
          id = (await create()).id;
          await exec(id, 'node -v');
        }),
      );
      await api.del(`/sandboxes/${id}`);
    }
    const ids: string[] = [];
    const started = performance.now();
    const burst = await Promise.all(
      Array.from({ length: BURST }, async () => {
        try {
          const sb = await create();
          ids.push(sb.id);
          await exec(sb.id, 'node -v');
          return performance.now() - started;
        } catch {
          burstFailures++;
          return undefined;
        }
      }),
    );
    figures.set(
      `burst of ${BURST}: create -> \`node -v\``,
      burst.filter((x): x is number => x !== undefined),
    );
    for (const id of ids) await api.del(`/sandboxes/${id}`);
  } finally {
    await srv.stop();
  }
  // The product default keeps two started sandboxes; a create takes one when the pool has refilled.
  const warm = await ServerProcess.start({ ...settings, SANDPIT_RATE_LIMIT: '0', SANDPIT_WARM_POOL: '2' });
  try {
    const wapi = new Api(warm.url, warm.key);
    for (let i = 0; i < N; i++) {
      await new Promise((r) => setTimeout(r, WARM_REFILL_MS));
      let id = '';
      add(
        `create -> node -v, warm pool (${WARM_REFILL_MS / 1000} s apart)`,
        await timeIt(async () => {
          const res = await wapi.post('/sandboxes', {});
          id = res.body.id;
          const ran = await wapi.post(`/sandboxes/${id}/exec`, { command: 'node -v' });
          if (ran.status !== 200) throw new Error(`warm exec: ${ran.status}`);
        }),
      );
      await wapi.del(`/sandboxes/${id}`);
    }
  } finally {
    await warm.stop();
  }
  return { engine, raw, figures, burstFailures };
}

async function main(): Promise<void> {
  const rootfs = await ensureBaseTemplate(IMAGE_DIR);
  const runsc = await defaultRunsc();
  console.log(
    `The agent's loop (${N} runs each, burst ${BURST}); load before: ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  // Busy loops stand for the rest of a loaded host; they end with this process.
  const endLoops = busyLoops(LOAD);
  process.on('exit', endLoops);
  if (LOAD > 0) console.log(`${LOAD} busy loops running on the host`);
  for (const engine of ENGINES) {
    const row = await measure(engine, rootfs, runsc);
    const rawMs = median(row.raw);
    console.log(`${engine}: raw \`${engine.startsWith('gvisor') ? 'runsc' : 'crun'} run /bin/true\` median ${rawMs.toFixed(1)} ms`);
    for (const [name, xs] of row.figures) {
      const p95 = percentile(xs, 95);
      console.log(`  ${name.padEnd(40)} median ${median(xs).toFixed(1).padStart(7)} ms   p95 ${p95.toFixed(1).padStart(7)} ms   ${(median(xs) / rawMs).toFixed(2)}x raw   n=${xs.length}`);
    }
    console.log(`  burst failures: ${row.burstFailures}\n`);
  }
  console.log(
    `load after: ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  endLoops();
}

await main();
