/**
 * Issue 24 volume benchmarks against a real server process, per engine: what a volume mount adds
 * to create (target: at most 5 ms), and dd write throughput inside a sandbox to a volume against
 * the sandbox's own disk (target: at least 80%). Run: node bench/volumes.bench.ts
 * (BENCH_DRIVERS=container,gvisor; BENCH_RUNS, default 8 creates and 3 dd runs each way).
 * Creates are timed twice: both booting (no warm pool, no template capture), which is the mount's
 * own cost, and on the defaults (a warm pool of 2, creates 2 s apart so it refills), where both take a
 * pre-started sandbox (crun and gVisor mount the volume into it running); on gVisor also from a team
 * template with a start command, whose creates restore its capture (the volume given through the hub).
 * Writes end with conv=fsync, so they reach the disk below (both on this host's btrfs stores).
 * The client, server and sandboxes share the host's CPUs: other work moves these numbers.
 */
import { Api, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, report } from './stats.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const DD_MIB = 256;
/** How long the warm pool is given to refill between two creates on the defaults. */
const WARM_REFILL_MS = 2000;
const SETTINGS: { name: string; env: Record<string, string>; pauseMs: number; captured?: boolean }[] = [
  { name: 'both boot', env: { SANDPIT_WARM_POOL: '0', SANDPIT_TEMPLATE_CAPTURE: '0' }, pauseMs: 300 },
  { name: 'defaults, warm pool', env: { SANDPIT_WARM_POOL: '2' }, pauseMs: WARM_REFILL_MS },
  { name: 'captured template (gvisor)', env: { SANDPIT_WARM_POOL: '0' }, pauseMs: 300, captured: true },
];
/** A template whose creates restore its capture (gVisor captures templates with a start command). */
const CAPTURED = { name: 'bench-captured', start_cmd: 'exec sleep infinity', ready_cmd: 'true' };

async function exec(api: Api, id: string, command: string): Promise<string> {
  const res = await api.post(`/sandboxes/${id}/exec`, { command, timeout_s: 300 });
  if (res.status !== 200 || res.body.exit_code !== 0) throw new Error(`exec failed: ${JSON.stringify(res.body)}`);
  return `${res.body.stdout}${res.body.stderr}`;
}

/** MB/s of a `dd ... conv=fsync` run, from its byte count and seconds. */
async function ddWrite(api: Api, id: string, file: string): Promise<number> {
  const out = await exec(api, id, `dd if=/dev/zero of=${file} bs=1M count=${DD_MIB} conv=fsync 2>&1; rm -f ${file}`);
  const m = /(\d+) bytes .* copied, ([\d.]+) s/.exec(out);
  if (!m) throw new Error(`unexpected dd output: ${out}`);
  return Number(m[1]) / Number(m[2]) / 1e6;
}

/** Create times without and with one volume (of template `from`, else the default), alternating, `pauseMs` after each delete. */
async function creates(api: Api, pauseMs: number, from?: string): Promise<{ plain: number[]; mounted: number[] }> {
  const plain: number[] = [];
  const mounted: number[] = [];
  const base = from ? { from_template: from } : {};
  for (let i = 0; i < RUNS; i++) {
    for (const [body, into] of [
      [base, plain],
      [{ ...base, volumes: [{ volume: 'bench', path: '/vol' }] }, mounted],
    ] as const) {
      const t0 = performance.now();
      const res = await api.post('/sandboxes', body);
      into.push(performance.now() - t0);
      if (res.status !== 201) throw new Error(`create failed: ${JSON.stringify(res.body)}`);
      await api.del(`/sandboxes/${res.body.id}`);
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }
  return { plain, mounted };
}

/** Builds CAPTURED and waits for its capture; answers its id. */
async function capturedTemplate(api: Api): Promise<string> {
  const id = (await api.post('/templates', CAPTURED)).body.id as string;
  const deadline = Date.now() + 180_000;
  for (;;) {
    const t = (await api.get(`/templates/${id}`)).body;
    if (t.status === 'failed') throw new Error(`template build failed: ${t.error}`);
    if (t.captured === true) return id;
    if (Date.now() > deadline) throw new Error('the template was not captured within 180 s');
    await new Promise((r) => setTimeout(r, 250));
  }
}

for (const driver of (process.env.BENCH_DRIVERS ?? 'container,gvisor').split(',')) {
  for (const setting of SETTINGS) {
    if (setting.captured && driver !== 'gvisor') continue;
    const server = await ServerProcess.start({ SANDPIT_DRIVER: driver, ...setting.env });
    const api = new Api(server.url, server.key);
    try {
      await api.post('/volumes', { name: 'bench', size_mib: 4096 });
      const from = setting.captured ? await capturedTemplate(api) : undefined;
      const { plain, mounted } = await creates(api, setting.pauseMs, from);
      console.log(`--- ${driver}, ${setting.name}`);
      report('create, no volume', plain);
      report('create, one volume', mounted);
      console.log(`mount adds (difference of medians)             ${(median(mounted) - median(plain)).toFixed(2)} ms   (target <= 5 ms)`);
      if (setting === SETTINGS[0]) {
        const sb = (await api.post('/sandboxes', { volumes: [{ volume: 'bench', path: '/vol' }] })).body;
        const own: number[] = [];
        const vol: number[] = [];
        for (let i = 0; i < Math.min(RUNS, 3); i++) {
          own.push(await ddWrite(api, sb.id, '/home/user/dd.bin'));
          vol.push(await ddWrite(api, sb.id, '/vol/dd.bin'));
        }
        console.log(`dd write ${DD_MIB} MiB, own disk          median ${median(own).toFixed(1)} MB/s   n=${own.length}`);
        console.log(`dd write ${DD_MIB} MiB, volume            median ${median(vol).toFixed(1)} MB/s   n=${vol.length}`);
        console.log(`volume / own disk                           ${((median(vol) / median(own)) * 100).toFixed(0)}%   (target >= 80%)`);
        await api.del(`/sandboxes/${sb.id}`);
      }
      await api.del('/volumes/bench');
    } finally {
      await server.stop();
    }
  }
}
