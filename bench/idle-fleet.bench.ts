/**
 * What active sandboxes that do nothing cost the host, per gVisor engine setting: the CPU the whole
 * host spends busy with BENCH_IDLE (default 20) idle sandboxes beside an idle server, per sandbox, and
 * the CPU of their engines' own processes, and how quickly a `GET /sandboxes/{id}` and an exec `true`
 * answer meanwhile. Beside it, one raw
 * `runsc run sleep` of the same build, platform and CPU count, idle, timed in the same run. Prints medians;
 * asserts nothing. Run with nothing else on the host.
 *
 *   node bench/idle-fleet.bench.ts    BENCH_ENGINES (gvisor:systrap,gvisor:ptrace,gvisor:systrap@2), BENCH_IDLE (20)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { defaultRunsc } from '../packages/server/src/runtime/gvisor/engines.ts';
import { ensureBaseTemplate } from '../packages/server/src/templates/base-template.ts';
import { Api, IMAGE_DIR, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { cpuOf, hostBusySeconds } from './process-cpu.ts';
import { rawRunscIdleCpu } from './raw-engines.ts';
import { median, percentile, sample } from './stats.ts';

const ENGINES = (process.env.BENCH_ENGINES ?? 'gvisor:systrap,gvisor:ptrace,gvisor:systrap@2').split(',');
const IDLE = Number(process.env.BENCH_IDLE ?? 20);
const WINDOW_S = 10;
/** CPU time is counted in clock ticks of 10 ms. */
const TICK_MS = 10;

/** Host CPU (ms per second, all CPUs) over the window. */
async function hostCpu(): Promise<number> {
  const before = hostBusySeconds();
  await sleep(WINDOW_S * 1000);
  return ((hostBusySeconds() - before) * 1000) / WINDOW_S;
}

const rootfs = await ensureBaseTemplate(IMAGE_DIR);
const runsc = await defaultRunsc();
console.log(`${IDLE} idle gVisor sandboxes per setting; host CPU over ${WINDOW_S} s (2 CPUs = 2000 ms per s)\n`);
for (const engine of ENGINES) {
  const [setting, cpus] = engine.split('@') as [string, string | undefined];
  const platform = setting.split(':')[1] ?? 'systrap';
  const raw = await rawRunscIdleCpu(runsc, platform, rootfs, WINDOW_S, Number(cpus ?? 1));
  const srv = await ServerProcess.start({
    SANDPIT_DRIVER: 'gvisor',
    SANDPIT_RUNSC_PLATFORM: platform,
    SANDPIT_RATE_LIMIT: '0',
    SANDPIT_WARM_POOL: '0',
    SANDPIT_MAX_ACTIVE_SANDBOXES: String(IDLE + 2),
    ...(cpus ? { SANDPIT_GVISOR_MIN_CPUS: cpus } : {}),
  });
  const api = new Api(srv.url, srv.key);
  try {
    const empty = await hostCpu();
    const ids: string[] = [];
    for (let i = 0; i < IDLE; i++) {
      const res = await api.post('/sandboxes', {});
      if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
      ids.push(res.body.id);
    }
    await sleep(3000);
    const engines = async () => (await Promise.all(ids.map((id) => cpuOf(id.slice(-36))))).reduce((a, b) => a + b, 0);
    const enginesBefore = await engines();
    const full = await hostCpu();
    const perEngine = (((await engines()) - enginesBefore) * 1000) / WINDOW_S / IDLE;
    const get = await sample(50, () => api.get(`/sandboxes/${ids[0]}`));
    const exec = await sample(20, async () => {
      const res = await api.post(`/sandboxes/${ids[IDLE - 1]}/exec`, { command: 'true' });
      if (res.body.exit_code !== 0) throw new Error(`exec: ${JSON.stringify(res.body)}`);
    });
    const per = (full - empty) / IDLE;
    console.log(
      `${engine}`.padEnd(20),
      `engine CPU per idle sandbox ${perEngine.toFixed(1)} ms/s (raw \`runsc run sleep\` ${raw > 0 ? `${raw.toFixed(1)}, ${(perEngine / raw).toFixed(2)}x` : `under ${TICK_MS / WINDOW_S} ms/s: no clock tick in the window`})`,
      `| host CPU: ${empty.toFixed(0)} ms/s with the server alone, ${full.toFixed(0)} with ${IDLE} idle sandboxes: ${per.toFixed(1)} ms/s each`,
      `| meanwhile GET median ${median(get).toFixed(1)} ms p99 ${percentile(get, 99).toFixed(1)}; exec \`true\` median ${median(exec).toFixed(1)} ms p95 ${percentile(exec, 95).toFixed(1)}`,
    );
    for (const id of ids) await api.del(`/sandboxes/${id}`);
  } finally {
    await srv.stop();
  }
}
