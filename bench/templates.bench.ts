/**
 * Issue 6 benchmarks against a real server process, per driver:
 * create -> first exec with a warm pool (platform/base and a template with
 * start/ready commands), the same without a pool, and a rebuild whose last
 * step changed (which steps ran is printed). With gvisor also: a start/ready
 * template restored from its capture vs booted (captures off), and a fork of
 * platform/base from a snapshot vs its plain boot (why templates without
 * start/ready commands are not captured).
 * Run: node bench/templates.bench.ts   (BENCH_DRIVERS=container,gvisor BENCH_RUNS=20)
 */
import { Api, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { report, timeIt } from './stats.ts';

const N = Number(process.env.BENCH_RUNS ?? 20);
const DRIVERS = (process.env.BENCH_DRIVERS ?? 'container,gvisor').split(',');

async function followBuild(server: ServerProcess, res: { body: { id: string; build_id: string } }): Promise<void> {
  await fetch(`${server.url}/templates/${res.body.id}/builds/${res.body.build_id}/logs`, { headers: { 'x-api-key': server.key } }).then((r) => r.text());
}

async function waitPool(api: Api, want: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if ((await api.get('/info')).body.warm_pool.ready >= want) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the warm pool did not refill');
}

/** create -> first exec, each run after the pool has refilled (a create that finds the pool empty boots instead). */
async function createToExec(api: Api, body: object, pooled: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < N; i++) {
    if (pooled) await waitPool(api, pooled);
    let id = '';
    out.push(
      await timeIt(async () => {
        const sb = await api.post('/sandboxes', body);
        if (sb.status !== 201) throw new Error(JSON.stringify(sb.body));
        id = sb.body.id;
        const ex = await api.post(`/sandboxes/${id}/exec`, { command: 'echo hi' });
        if (ex.body.stdout !== 'hi\n') throw new Error(JSON.stringify(ex.body));
      }),
    );
    await api.del(`/sandboxes/${id}`);
  }
  return out;
}

async function benchDriver(driver: string): Promise<void> {
  const server = await ServerProcess.start({ SANDPIT_DRIVER: driver, SANDPIT_RATE_LIMIT: '0', SANDPIT_WARM_POOL: '1', SANDPIT_WARM_POOL_INTERVAL_MS: '50' });
  const api = new Api(server.url, server.key);
  try {
    console.log(`\nSandpit templates benchmark (driver ${driver}, ${N} runs each)`);
    const steps = [
      { type: 'run', command: 'echo one > /home/user/one' },
      { type: 'env', env: { APP: 'bench' } },
      { type: 'run', command: 'echo v1 > /home/user/last' },
    ];
    const tpl = { name: 'bench-web', steps, start_cmd: 'exec python3 -m http.server 8000', ready_cmd: 'curl -sf http://127.0.0.1:8000/ >/dev/null', warm_pool: 1 };
    const first = await api.post('/templates', tpl);
    await followBuild(server, first);

    report('create -> first exec, warm pool (platform/base)', await createToExec(api, {}, 2), '<= 30 ms');
    report('create -> first exec, warm pool (start+ready tpl)', await createToExec(api, { from_template: 'bench-web' }, 2), '<= 30 ms');
    // Both pools are drained after each create, so these boot.
    report('create -> first exec, no pool (platform/base)', await createToExecCold(api, {}), undefined);
    report('create -> first exec, no pool (start+ready tpl)', await createToExecCold(api, { from_template: 'bench-web' }), undefined);

    const changed = { ...tpl, steps: [...steps.slice(0, 2), { type: 'run', command: 'echo v2 > /home/user/last' }] };
    let res: { body: { id: string; build_id: string } } = { body: { id: '', build_id: '' } };
    const ms = await timeIt(async () => {
      res = await api.post('/templates', changed);
      await followBuild(server, res);
    });
    const b = (await api.get(`/templates/${res.body.id}/builds/${res.body.build_id}`)).body;
    const ran = b.steps.filter((s: { result: string }) => s.result === 'ran').map((s: { index: number }) => s.index + 1);
    console.log(`rebuild with the last step changed: ${ms.toFixed(0)} ms; steps run: ${ran.join(', ')}; results: ${b.steps.map((s: { result: string }) => s.result).join(', ')}`);
  } finally {
    await server.stop();
  }
}

/** Takes the waiting pool sandbox first, so the measured create finds the pool empty. */
async function createToExecCold(api: Api, body: object): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < Math.min(N, 10); i++) {
    const drain = await api.post('/sandboxes', body);
    let id = '';
    out.push(
      await timeIt(async () => {
        const sb = await api.post('/sandboxes', body);
        id = sb.body.id;
        await api.post(`/sandboxes/${id}/exec`, { command: 'echo hi' });
      }),
    );
    await api.del(`/sandboxes/${id}`);
    await api.del(`/sandboxes/${drain.body.id}`);
  }
  return out;
}

async function waitCaptured(api: Api, name: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if ((await api.get(`/templates/${name}`)).body.captured === true) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`template ${name} was not captured`);
}

/** gvisor only: no warm pool, so every create either restores the template's capture or boots. */
async function benchCapture(): Promise<void> {
  const tpl = {
    name: 'bench-capture',
    steps: [{ type: 'run', command: 'echo one > /home/user/one' }],
    start_cmd: 'exec python3 -m http.server 8000 --bind 127.0.0.1',
    ready_cmd: 'curl -sf http://127.0.0.1:8000/ >/dev/null',
  };
  console.log(`\nSandpit template captures benchmark (driver gvisor, ${N} runs each)`);
  for (const capture of [true, false]) {
    const server = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_RATE_LIMIT: '0', SANDPIT_TEMPLATE_CAPTURE: capture ? '1' : '0' });
    const api = new Api(server.url, server.key);
    try {
      const started = performance.now();
      await followBuild(server, await api.post('/templates', tpl));
      if (capture) {
        await waitCaptured(api, tpl.name);
        console.log(`build end -> captured: ${(performance.now() - started).toFixed(0)} ms after the build was posted`);
      }
      const label = capture ? 'restored from its capture' : 'booted (captures off)';
      report(`create -> first exec, start+ready tpl, ${label}`, await createToExec(api, { from_template: tpl.name }, 0), capture ? '<= 400 ms' : undefined);
      if (!capture) continue;
      report('create -> first exec, platform/base booted', await createToExec(api, {}, 0), undefined);
      const src = (await api.post('/sandboxes', {})).body;
      const snap = (await api.post(`/sandboxes/${src.id}/snapshot`, {})).body;
      report('create -> first exec, platform/base forked', await createToExec(api, { from_snapshot: snap.id }, 0), undefined);
      await api.del(`/sandboxes/${src.id}`);
      await api.del(`/snapshots/${snap.id}`);
    } finally {
      await server.stop();
    }
  }
}

for (const d of DRIVERS) await benchDriver(d);
if (DRIVERS.includes('gvisor')) await benchCapture();
