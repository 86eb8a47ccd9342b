import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { BUNDLED_RUNSC, resolveBinary } from '../src/runtime/gvisor/engines.ts';
import { Api, ServerProcess } from './helpers/server-process.ts';

// Upgrading runsc under paused sandboxes: each keeps the build (and platform) that wrote its checkpoint,
// also one whose meta predates recorded builds; new sandboxes get the new default.
let srv: ServerProcess;
let api: Api;
const skip = existsSync(BUNDLED_RUNSC) ? false : `${BUNDLED_RUNSC} is not installed (scripts/bootstrap.sh installs it)`;

before(async () => {
  if (skip) return;
  srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_RUNSC: 'runsc', SANDPIT_RUNSC_PLATFORM: 'ptrace' });
  api = new Api(srv.url, srv.key);
});

after(async () => {
  await srv?.stop();
});

// Renamed into place: a read between `>`'s truncate and its write would see an empty file.
const COUNTER = 'cd /tmp && (i=0; while true; do i=$((i+1)); echo $i > count.new && mv count.new count; sleep 0.05; done) >/dev/null 2>&1 &';

async function exec(id: string, command: string): Promise<string> {
  const res = await api.post(`/sandboxes/${id}/exec`, { command });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.exit_code, 0, `${command}: ${res.body.stderr}`);
  return res.body.stdout;
}

// 0 until the loop's first rename.
const count = async (id: string) => Number((await exec(id, 'cat /tmp/count 2>/dev/null || echo 0')).trim());
const sandboxDir = (id: string) => join(srv.dataDir, 'gvisor', 'sandboxes', id.slice(-36));

interface Meta {
  runscId: string;
  engine?: { path: string; version: string; platform: string };
}

const readMeta = async (id: string) => JSON.parse(await readFile(join(sandboxDir(id), 'sandbox.json'), 'utf8')) as Meta;

/** The binary the sandbox's running sentry was started from, found through the state file in its build's root. */
async function sentryExe(id: string): Promise<string> {
  const meta = await readMeta(id);
  const root = join(srv.dataDir, 'gvisor', meta.engine ? `runsc-${meta.engine.version.replace(/[^\w.-]/g, '_')}` : 'runsc');
  const state = JSON.parse(await readFile(join(root, `${meta.runscId}_sandbox:${meta.runscId}.state`), 'utf8')) as { sandbox: { pid: number } };
  return readlink(`/proc/${state.sandbox.pid}/exe`);
}

async function startCounting(): Promise<string> {
  const sb = await api.post('/sandboxes', {});
  assert.equal(sb.status, 201, JSON.stringify(sb.body));
  await exec(sb.body.id, COUNTER);
  for (let i = 0; (await count(sb.body.id)) < 3; i++) {
    assert.ok(i < 200, 'the counter counts');
    await new Promise((r) => setTimeout(r, 50));
  }
  return sb.body.id;
}

test('paused sandboxes resume on the runsc that paused them after an upgrade; new sandboxes run on the new default', { skip }, async () => {
  const oldRunsc = await resolveBinary('runsc');
  const pinned = await startCounting();
  const legacy = await startCounting();
  assert.equal(await sentryExe(pinned), oldRunsc, 'the setting chose the old build');
  for (const id of [pinned, legacy]) assert.equal((await api.post(`/sandboxes/${id}/pause`)).status, 200);
  const atPause = { pinned: await count(pinned), legacy: await count(legacy) };
  for (const id of [pinned, legacy]) assert.equal((await api.post(`/sandboxes/${id}/pause`)).status, 200);
  // A meta from before builds were recorded names none: it means the old build, ptrace and the old state root.
  const { engine, ...old } = await readMeta(legacy);
  assert.deepEqual(engine && { path: engine.path, platform: engine.platform }, { path: oldRunsc, platform: 'ptrace' });
  await writeFile(join(sandboxDir(legacy), 'sandbox.json'), JSON.stringify(old));

  await srv.kill9();
  delete srv.env.SANDPIT_RUNSC;
  delete srv.env.SANDPIT_RUNSC_PLATFORM;
  await srv.launch();

  for (const id of [pinned, legacy]) {
    assert.equal((await api.get(`/sandboxes/${id}`)).body.status, 'paused');
    const resumed = await api.post(`/sandboxes/${id}/resume`);
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
    assert.equal(await sentryExe(id), oldRunsc, 'restored by the build that wrote its checkpoint');
    const n1 = await count(id);
    await new Promise((r) => setTimeout(r, 300));
    const n2 = await count(id);
    const before = id === pinned ? atPause.pinned : atPause.legacy;
    assert.ok(n1 >= before && n2 > n1, `the counter continues from where it was (${before} -> ${n1} -> ${n2})`);
  }
  assert.equal((await readMeta(legacy)).engine, undefined, 'the legacy sandbox stays on the legacy build');
  assert.match(await exec(legacy, 'ls -l /tmp/count'), /^-rw-r--r-- 1 user user/, 'with the statx shim it had');

  const fresh = await api.post('/sandboxes', {});
  assert.equal(fresh.status, 201, JSON.stringify(fresh.body));
  assert.equal(await sentryExe(fresh.body.id), BUNDLED_RUNSC);
  assert.deepEqual((await readMeta(fresh.body.id)).engine, { path: BUNDLED_RUNSC, version: '0.0~20240729.0', platform: 'systrap' });
  assert.match(await exec(fresh.body.id, 'ls -l /etc/hostname && stat -c %s /etc/hostname'), /^-[rwx-]{9} .*\n\d+\n$/, 'statx works without the shim');
  assert.equal((await exec(fresh.body.id, 'cat /etc/ld.so.preload 2>/dev/null || echo none')).trim(), 'none', 'no shim is preloaded');
  // Template and snapshot layers are read from the host overlay: writes must land there, not in gVisor's own overlay.
  await exec(fresh.body.id, 'echo on-host > /home/user/written');
  const upper = join(srv.dataDir, 'gvisor', 'layers', fresh.body.id.slice(-36), 'upper');
  assert.equal(await readFile(join(upper, 'home', 'user', 'written'), 'utf8'), 'on-host\n');
  // Pause and resume on the new build, then destroy all three through their own builds.
  assert.equal((await api.post(`/sandboxes/${fresh.body.id}/pause`)).status, 200);
  assert.equal((await api.post(`/sandboxes/${fresh.body.id}/resume`)).status, 200);
  for (const id of [pinned, legacy, fresh.body.id]) assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
  // The engines go after the delete's answer.
  const deadline = Date.now() + 30_000;
  for (const root of ['runsc', 'runsc-0.0_20221219.0', 'runsc-0.0_20240729.0']) {
    const states = async () => (await readdir(join(srv.dataDir, 'gvisor', root))).filter((f) => f.endsWith('.state'));
    while ((await states()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await states(), [], `no runsc container left in ${root}`);
  }
});
