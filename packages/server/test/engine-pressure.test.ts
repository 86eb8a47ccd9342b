import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { enginePid } from './helpers/engine-process.ts';
import { Api, ServerProcess } from './helpers/server-process.ts';

/**
 * The host cgroup (cpuacct) of a sandbox: named after it (crun), or after its runsc container,
 * found from the runsc processes that name the data dir.
 */
async function hostCgroup(dataDir: string, sandboxId: string): Promise<string> {
  const base = '/sys/fs/cgroup/cpuacct/sandpit';
  const own = join(base, sandboxId.replace(/^sb-[a-z0-9]+-/, ''));
  if (
    await readFile(join(own, 'cpuacct.usage'), 'utf8').then(
      () => true,
      () => false,
    )
  )
    return own;
  for (const name of await readdir(base)) {
    const procs = (await readFile(join(base, name, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
    for (const pid of procs) {
      const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      if (cmd.includes(dataDir)) return join(base, name);
    }
  }
  throw new Error(`no cgroup of ${dataDir}`);
}

for (const driver of ['container', 'gvisor']) {
  describe(`engine limits on ${driver}`, () => {
    let server: ServerProcess;
    let api: Api;
    let id: string;
    const exec = async (command: string) => (await api.post(`/sandboxes/${id}/exec`, { command, timeout_s: 60 })).body;

    before(async () => {
      // gVisor's engine on two CPUs, so the view of one inside is what is checked.
      server = await ServerProcess.start({ SANDPIT_DRIVER: driver, SANDPIT_RATE_LIMIT: '0', ...(driver === 'gvisor' ? { SANDPIT_GVISOR_MIN_CPUS: '2' } : {}) });
      api = new Api(server.url, server.key);
      const res = await api.post('/sandboxes', {});
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.resources.vcpu_count, 1);
      assert.equal(res.body.resources.memory_mib, 1024);
      id = res.body.id;
    });
    after(async () => {
      await server?.stop();
    });

    test('a process that outgrows the memory is killed (137); the sandbox and its agent live on', async () => {
      const oom = await exec('python3 -c "b = bytearray(1280 * 1024**2); b[::4096] = b\'x\' * (len(b) // 4096)"');
      assert.equal(oom.exit_code, 137, JSON.stringify(oom));
      const after = await exec('echo alive');
      assert.deepEqual([after.exit_code, after.stdout], [0, 'alive\n'], JSON.stringify(after));
      assert.equal((await api.get(`/sandboxes/${id}`)).body.status, 'active');
      // Memory freed by the kill is usable again.
      const again = await exec('python3 -c "b = bytearray(512 * 1024**2); b[::4096] = b\'x\' * (len(b) // 4096); print(len(b))"');
      assert.deepEqual([again.exit_code, again.stdout], [0, `${512 * 1024 ** 2}\n`], JSON.stringify(again));
    });

    test('the CPU count seen inside agrees with vcpu_count', async () => {
      const res = await exec('nproc; python3 -c "import os; print(os.cpu_count(), len(os.sched_getaffinity(0)))"; getconf _NPROCESSORS_ONLN; grep -c ^processor /proc/cpuinfo; sh -c nproc');
      assert.deepEqual([res.exit_code, res.stdout], [0, '1\n1 1\n1\n1\n1\n'], JSON.stringify(res));
    });

    if (driver === 'gvisor') {
      test("SANDPIT_GVISOR_MIN_CPUS=2: gVisor's own kernel runs on two CPUs while the sandbox is shown one, and its mount points are no change of the sandbox's", async (t) => {
        if ((await readFile('/sys/devices/system/cpu/online', 'utf8')).trim() === '0') return t.skip('this host has one CPU');
        const cmd = (await readFile(`/proc/${await enginePid(server.dataDir, id)}/cmdline`, 'utf8')).split('\0');
        assert.ok(cmd.includes('--cpu-num=2'), cmd.join(' '));
        const changes = await api.get(`/sandboxes/${id}/changes`);
        assert.equal(changes.status, 200, JSON.stringify(changes.body));
        assert.deepEqual(
          changes.body.changes.filter((c: { path: string }) => /^\/(proc|sys)\//.test(c.path)),
          [],
        );
      });

      test("on the defaults the engine boots on the sandbox's one CPU", async () => {
        const one = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_RATE_LIMIT: '0' });
        try {
          const oneApi = new Api(one.url, one.key);
          const sb = (await oneApi.post('/sandboxes', {})).body;
          const cmd = (await readFile(`/proc/${await enginePid(one.dataDir, sb.id)}/cmdline`, 'utf8')).split('\0');
          assert.ok(cmd.includes('--cpu-num=1'), cmd.join(' '));
          const res = (await oneApi.post(`/sandboxes/${sb.id}/exec`, { command: 'nproc' })).body;
          assert.deepEqual([res.exit_code, res.stdout], [0, '1\n'], JSON.stringify(res));
        } finally {
          await one.stop();
        }
      });
    }

    test("the sandbox's engine weighs less on the CPUs than the server: under contention the platform runs first", async () => {
      const cpuGroupOf = async (pid: number) => {
        const line = (await readFile(`/proc/${pid}/cgroup`, 'utf8')).split('\n').find((l) => /^\d+:([^:]*,)?cpu(,[^:]*)?:/.test(l));
        return join('/sys/fs/cgroup/cpu', line!.split(':')[2]!);
      };
      const engine = await cpuGroupOf(await enginePid(server.dataDir, id));
      assert.match(engine, /^\/sys\/fs\/cgroup\/cpu\/sandpit\/[^/]+$/);
      const sandboxes = Number(await readFile('/sys/fs/cgroup/cpu/sandpit/cpu.shares', 'utf8'));
      const platform = Number(await readFile(join(await cpuGroupOf(server.pid!), 'cpu.shares'), 'utf8'));
      assert.ok(sandboxes < platform, `all sandboxes together weigh ${sandboxes}, the server's group ${platform}`);
    });

    test('two busy loops use at most one CPU, engine processes included', async () => {
      const cg = await hostCgroup(server.dataDir, id);
      const usage = async () => Number(await readFile(join(cg, 'cpuacct.usage'), 'utf8'));
      const before = await usage();
      const t0 = performance.now();
      const res = await exec('timeout 3 sh -c "while :; do :; done" & timeout 3 sh -c "while :; do :; done"; r=$?; wait; exit $r');
      const wallNs = (performance.now() - t0) * 1e6;
      const usedNs = (await usage()) - before;
      assert.equal(res.exit_code, 124, JSON.stringify(res));
      assert.ok(usedNs <= wallNs * 1.1, `used ${(usedNs / 1e9).toFixed(2)} s of CPU in ${(wallNs / 1e9).toFixed(2)} s`);
    });

    test("the engine's processes are reaped by the reaper the server runs under: it is their parent, and a deleted sandbox leaves no zombie", async () => {
      const sb = (await api.post('/sandboxes', {})).body;
      const pid = await enginePid(server.dataDir, sb.id);
      const ppid = Number(/^PPid:\s+(\d+)$/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1]);
      assert.equal(ppid, server.child?.pid, `the engine process ${pid} was adopted by the reaper`);
      assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
      // A zombie keeps its /proc entry until its parent reaps it.
      let state = '';
      for (const deadline = Date.now() + 5_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
        state = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
        if (!state) break;
      }
      assert.equal(state, '', `process ${pid} is still there: ${state.slice(0, 80)}`);
    });

    test('an engine that dies under a live sandbox is noticed within seconds: failed with a reason, operations answer 409', async () => {
      const sb = (await api.post('/sandboxes', {})).body;
      assert.equal((await api.post(`/sandboxes/${sb.id}/exec`, { command: 'true' })).body.exit_code, 0);
      process.kill(await enginePid(server.dataDir, sb.id), 'SIGKILL');

      let view: any;
      for (const deadline = Date.now() + 15_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
        view = (await api.get(`/sandboxes/${sb.id}`)).body;
        if (view.status !== 'active') break;
      }
      assert.equal(view.status, 'failed', JSON.stringify(view));
      assert.equal(view.failure_reason, 'engine_exited');

      const exec = await api.post(`/sandboxes/${sb.id}/exec`, { command: 'true' });
      assert.equal(exec.status, 409, JSON.stringify(exec.body));
      assert.equal(exec.body.error.code, 'conflict');
      assert.match(exec.body.error.message, /failed/);
      assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
    });
  });
}
