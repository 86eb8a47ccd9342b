/**
 * Issue 2 benchmarks against a real server process and the raw engine in the same run:
 * create -> first exec, data-plane exec round trip, pause/resume, idle memory, GET throughput.
 * Run: ./sandpit bench   (or: node bench/foundation.bench.ts)
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { Api, IMAGE_DIR, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { ensureBaseTemplate } from '../packages/server/src/templates/base-template.ts';
import { median, ratio, report, sample } from './stats.ts';

const run = promisify(execFile);
const N = Number(process.env.BENCH_RUNS ?? 50);
const IDLE = Number(process.env.BENCH_IDLE_SANDBOXES ?? 100);

async function rawCrun(rootfs: string): Promise<number[]> {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-bench-crun-'));
  try {
    await run('crun', ['spec'], { cwd: dir });
    const spec = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
    spec.process.terminal = false;
    spec.process.args = ['/bin/true'];
    spec.root = { path: rootfs, readonly: true };
    await writeFile(join(dir, 'config.json'), JSON.stringify(spec));
    let i = 0;
    return await sample(N, () => run('crun', ['--root', join(dir, 'state'), 'run', '--bundle', dir, `bench-${process.pid}-${i++}`]));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function rssKiB(pid: number | undefined): Promise<number> {
  const m = /VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''));
  return Number(m?.[1] ?? 0);
}

async function cgroupMemoryBytes(id: string): Promise<number> {
  return Number((await readFile(`/sys/fs/cgroup/memory/sandpit/${id}/memory.usage_in_bytes`, 'utf8').catch(() => '0')).trim());
}

async function memAvailableKiB(): Promise<number> {
  const m = /MemAvailable:\s+(\d+)/.exec(await readFile('/proc/meminfo', 'utf8'));
  return Number(m?.[1] ?? 0);
}

async function main() {
  const rootfs = await ensureBaseTemplate(IMAGE_DIR);
  const server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_RATE_LIMIT: '0', SANDPIT_MAX_ACTIVE_SANDBOXES: String(Math.max(IDLE, N) + 10) });
  const api = new Api(server.url, server.key);
  try {
    console.log(`Sandpit foundation benchmark (driver container, ${N} runs each)\n`);
    const raw = await rawCrun(rootfs);
    report('raw `crun run /bin/true` (same root)', raw);

    const ids: string[] = [];
    const createExec = await sample(N, async () => {
      const created = await api.post('/sandboxes', {});
      if (created.status !== 201) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
      const sb = created.body;
      ids.push(sb.id);
      const res = await new Api(server.url).post('/exec', { command: 'true' }, { 'x-platform-sandbox-id': sb.id, 'x-access-token': sb.access_token });
      if (res.body.exit_code !== 0) throw new Error(`exec failed: ${JSON.stringify(res.body)}`);
    });
    report('create -> first exec of `true` returns', createExec, '<= 40 ms, <= 1.5x raw');
    ratio('create -> first exec vs raw crun run', createExec, raw);
    for (const id of ids.splice(0)) await api.del(`/sandboxes/${id}`);

    const sb = (await api.post('/sandboxes', {})).body;
    const dp = new Api(server.url);
    const headers = { 'x-platform-sandbox-id': sb.id, 'x-access-token': sb.access_token };
    await sample(20, () => dp.post('/exec', { command: 'true' }, headers));
    report('data-plane exec round trip of `true`', await sample(N * 4, () => dp.post('/exec', { command: 'true' }, headers)), '<= 5 ms');

    const pauses: number[] = [];
    const resumes: number[] = [];
    for (let i = 0; i < N; i++) {
      pauses.push(...(await sample(1, () => api.post(`/sandboxes/${sb.id}/pause`))));
      resumes.push(...(await sample(1, () => api.post(`/sandboxes/${sb.id}/resume`))));
    }
    report('pause (freezer, via API)', pauses, '<= 20 ms');
    report('resume (thaw, via API)', resumes, '<= 20 ms');

    const gets = await autocannon({ url: `${server.url}/sandboxes/${sb.id}`, headers: { 'x-api-key': server.key }, connections: 16, duration: 5 });
    console.log(`${'GET /sandboxes/{id} throughput'.padEnd(44)} ${Math.round(gets.requests.average)} req/s (non-2xx ${gets.non2xx})   (target >= 3000)`);
    await api.del(`/sandboxes/${sb.id}`);

    const before = await memAvailableKiB();
    const rssBefore = await rssKiB(server.pid);
    for (let i = 0; i < IDLE; i++) ids.push((await api.post('/sandboxes', {})).body.id);
    await new Promise((r) => setTimeout(r, 2000));
    const after = await memAvailableKiB();
    const rssAfter = await rssKiB(server.pid);
    let cgroupBytes = 0;
    for (const id of ids) cgroupBytes += await cgroupMemoryBytes(id.replace(/^sb-[a-z0-9]+-/, ''));
    const listed = (await api.get('/sandboxes?limit=1000')).body.sandboxes.filter((s: any) => s.status === 'active').length;
    console.log(`${'idle sandboxes held at once'.padEnd(44)} ${listed} active   (target 100)`);
    const perSandbox = cgroupBytes / 1024 / 1024 / IDLE;
    const perServer = (rssAfter - rssBefore) / 1024 / IDLE;
    console.log(`${'memory per idle sandbox: its cgroup (agent)'.padEnd(44)} ${perSandbox.toFixed(2)} MiB`);
    console.log(`${'memory per idle sandbox: server state'.padEnd(44)} ${perServer.toFixed(2)} MiB (server RSS delta / ${IDLE})`);
    console.log(
      `${'memory per idle sandbox: host MemAvailable'.padEnd(44)} ${((before - after) / 1024 / IDLE).toFixed(2)} MiB (delta / ${IDLE}; kernel objects and caches included)   (target <= 30 MiB)`,
    );
    for (const id of ids.splice(0)) await api.del(`/sandboxes/${id}`);
    console.log(`\nmedian summary: create+exec ${median(createExec).toFixed(1)} ms, raw crun ${median(raw).toFixed(1)} ms`);
  } finally {
    await server.stop();
  }
}

await main();
