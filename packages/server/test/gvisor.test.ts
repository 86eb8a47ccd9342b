import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Api, ServerProcess } from './helpers/server-process.ts';

// Real runsc (ptrace platform) behind a real server: pause is a checkpoint to disk, resume a restore.
let srv: ServerProcess;
let api: Api;

before(async () => {
  srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor' });
  api = new Api(srv.url, srv.key);
});

after(async () => {
  if (srv?.child && (srv.child.exitCode !== null || srv.child.signalCode !== null)) console.error(srv.output.slice(-4000));
  await srv?.stop();
});

// Writes through a relative path and an inherited descriptor: both must survive a restore.
const COUNTER = 'cd /tmp && exec 3>/tmp/held && (i=0; while true; do i=$((i+1)); echo $i > count.new && mv count.new count; echo $i >&3; sleep 0.05; done) >/dev/null 2>&1 &';

async function exec(id: string, command: string): Promise<{ stdout: string; stderr: string; exit_code: number }> {
  const res = await api.post(`/sandboxes/${id}/exec`, { command });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

async function count(id: string): Promise<number> {
  return Number((await exec(id, 'cat /tmp/count')).stdout.trim());
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('/info reports the gvisor driver and sandboxes record it', async () => {
  assert.equal((await api.get('/info')).body.driver, 'gvisor');
  const sb = await api.post('/sandboxes', {});
  assert.equal(sb.status, 201);
  assert.equal(sb.body.driver, 'gvisor');
  assert.equal((await api.del(`/sandboxes/${sb.body.id}`)).status, 204);
});

test('pause checkpoints to disk and resume continues every process: counter, cwd, open files, env', async () => {
  const sb = await api.post('/sandboxes', { env: { FROM_CREATE: 'kept' } });
  assert.equal(sb.status, 201, JSON.stringify(sb.body));
  const id = sb.body.id;
  await exec(id, COUNTER);
  await waitFor('the counter', async () => ((await count(id)) > 3 ? true : undefined));
  const NET = "ip -4 -o addr show | awk '{print $2, $4}'; ip -4 route show";
  const net = (await exec(id, NET)).stdout;
  assert.match(net, /^eth0 100\.\d+\.\d+\.\d+\/30$/m, "the netstack took the namespace's address");
  assert.match(net, /^default via 100\.\d+\.\d+\.\d+ dev eth0/m, 'and its default route');

  const paused = await api.post(`/sandboxes/${id}/pause`);
  assert.equal(paused.status, 200, JSON.stringify(paused.body));
  assert.equal(paused.body.status, 'paused');
  assert.match(paused.body.latest_snapshot_id, /^[0-9a-f-]{36}$/);
  assert.equal((await api.post(`/sandboxes/${id}/pause`)).status, 409, 'pausing a paused sandbox is a conflict');

  const resumed = await api.post(`/sandboxes/${id}/resume`);
  assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
  assert.equal(resumed.body.status, 'active');
  const before = await count(id);
  await new Promise((r) => setTimeout(r, 400));
  const later = await count(id);
  assert.ok(later > before, `the counter keeps counting after resume (${before} -> ${later})`);
  const held = await exec(id, 'wc -l < /tmp/held; echo $FROM_CREATE');
  const [lines, env] = held.stdout.trim().split('\n');
  assert.ok(Number(lines) >= later, 'the open file (fd 3) got every count, before and after the restore');
  assert.equal(env, 'kept', 'env vars from create survive');
  const sorted = (text: string) => text.split('\n').sort();
  assert.deepEqual(sorted((await exec(id, NET)).stdout), sorted(net), 'the restored netstack has the same addresses and routes (in any order)');
  assert.match((await exec(id, 'ls -l /tmp/count')).stdout, /^-rw-r--r-- 1 user user/, 'the restored sandbox still has its statx shim');
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
});

test('exec auto-resumes a paused sandbox, and auto-pause goes through the checkpoint', async () => {
  const sb = await api.post('/sandboxes', { auto_pause_seconds: 1 });
  const id = sb.body.id;
  await exec(id, COUNTER);
  await waitFor('auto-pause', async () => ((await api.get(`/sandboxes/${id}`)).body.status === 'paused' ? true : undefined));
  const n = await count(id);
  assert.ok(n > 0);
  assert.equal((await api.get(`/sandboxes/${id}`)).body.status, 'active', 'the exec resumed it');
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
});

test('a pause that keeps only the disk ends every process and is resumed by a fresh boot with the disk, env and network', async () => {
  const sb = await api.post('/sandboxes', { env: { FROM_CREATE: 'kept' } });
  assert.equal(sb.status, 201, JSON.stringify(sb.body));
  const id = sb.body.id;
  const STATE = 'cat /proc/sys/kernel/random/boot_id; ip -4 -o addr show eth0 | awk \'{print $4}\'; echo "$FROM_CREATE"';
  await exec(id, 'echo on-disk > /home/user/marker && (sleep 1000 >/dev/null 2>&1 &)');
  const [bootBefore, addrBefore] = (await exec(id, STATE)).stdout.trim().split('\n');

  const bad = await api.post(`/sandboxes/${id}/pause`, { keep_memory: 'no' });
  assert.equal(bad.status, 400, 'a keep_memory that is not a boolean is refused');
  assert.equal((await api.get(`/sandboxes/${id}`)).body.status, 'active', 'and changes nothing');

  const paused = await api.post(`/sandboxes/${id}/pause`, { keep_memory: false });
  assert.equal(paused.status, 200, JSON.stringify(paused.body));
  assert.equal(paused.body.status, 'paused');
  assert.equal(paused.body.kept_memory, false);
  assert.equal(paused.body.latest_snapshot_id, undefined, 'no checkpoint was written');
  const snap = await api.post(`/sandboxes/${id}/snapshot`, {});
  assert.equal(snap.status, 409, 'there is no memory to snapshot');

  const resumed = await api.post(`/sandboxes/${id}/resume`);
  assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
  assert.equal(resumed.body.status, 'active');
  assert.equal(resumed.body.kept_memory, undefined);
  const [bootAfter, addrAfter, env] = (await exec(id, STATE)).stdout.trim().split('\n');
  assert.notEqual(bootAfter, bootBefore, 'it booted afresh');
  assert.equal(addrAfter, addrBefore, 'on the same address');
  assert.equal(env, 'kept', 'with the env it was created with');
  assert.equal((await exec(id, 'cat /home/user/marker')).stdout, 'on-disk\n', 'its disk is kept');
  assert.equal((await exec(id, 'pgrep -x sleep || echo none')).stdout.trim(), 'none', 'its processes ended');

  // Again, with a command as the resume: it runs on the fresh boot.
  assert.equal((await api.post(`/sandboxes/${id}/pause`, { keep_memory: false })).status, 200);
  assert.equal((await exec(id, 'cat /home/user/marker')).stdout, 'on-disk\n');
  assert.equal((await api.get(`/sandboxes/${id}`)).body.status, 'active');
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
});

test("/tmp is on the sandbox's disk even when its template's /tmp is empty: no tmpfs over it, its files kept by a disk-only pause", async () => {
  // runsc mounts a memory tmpfs over an empty /tmp at boot; this template empties it.
  const built = await api.post('/templates', { name: 'empty-tmp', steps: [{ type: 'run', user: 'root', command: 'find /tmp -mindepth 1 -delete' }] });
  assert.equal(built.status, 202, JSON.stringify(built.body));
  await waitFor(
    'the build',
    async () => {
      const t = (await api.get(`/templates/${built.body.id}`)).body;
      if (t.status === 'failed') throw new Error(t.error);
      return t.status === 'ready' ? true : undefined;
    },
    120_000,
  );
  const sb = await api.post('/sandboxes', { from_template: built.body.id });
  assert.equal(sb.status, 201, JSON.stringify(sb.body));
  const id = sb.body.id;
  const mounted = await exec(id, 'grep -c " /tmp " /proc/mounts || true');
  assert.equal(mounted.stdout.trim(), '0', '/tmp is part of the root file system, not a mount of its own');
  await exec(id, 'echo kept > /tmp/state');
  assert.equal((await api.post(`/sandboxes/${id}/pause`, { keep_memory: false })).status, 200);
  assert.equal((await api.post(`/sandboxes/${id}/resume`)).status, 200);
  assert.equal((await exec(id, 'cat /tmp/state')).stdout, 'kept\n', 'a file of /tmp outlives a disk-only pause');
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
  assert.equal((await api.del(`/templates/${built.body.id}`)).status, 204);
});

test('a resume that drops the memory a pause kept boots the sandbox from its disk', async () => {
  const sb = await api.post('/sandboxes', {});
  assert.equal(sb.status, 201, JSON.stringify(sb.body));
  const id = sb.body.id;
  await exec(id, 'echo kept > /home/user/f && (sleep 1000 >/dev/null 2>&1 &)');
  const boot = async () => (await exec(id, 'cat /proc/sys/kernel/random/boot_id')).stdout;
  const before = await boot();
  const paused = await api.post(`/sandboxes/${id}/pause`);
  assert.equal(paused.status, 200);
  assert.ok(paused.body.latest_snapshot_id, 'the pause wrote a checkpoint');
  assert.equal((await api.post(`/sandboxes/${id}/resume`, { keep_memory: 'no' })).status, 400);
  const resumed = await api.post(`/sandboxes/${id}/resume`, { keep_memory: false });
  assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
  assert.equal(resumed.body.latest_snapshot_id, undefined, 'its checkpoint is gone');
  assert.notEqual(await boot(), before);
  assert.equal((await exec(id, 'cat /home/user/f; pgrep -x sleep || echo none')).stdout, 'kept\nnone\n');
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
});

test('an auto-pause set to keep only the disk takes no checkpoint', async () => {
  const sb = await api.post('/sandboxes', { auto_pause_seconds: 600, auto_pause_keep_memory: false });
  assert.equal(sb.status, 201, JSON.stringify(sb.body));
  assert.equal(sb.body.auto_pause_keep_memory, false);
  const id = sb.body.id;
  assert.equal((await api.patch(`/sandboxes/${id}`, { auto_pause_keep_memory: true })).body.auto_pause_keep_memory, undefined, 'PATCH sets it back');
  const patched = await api.patch(`/sandboxes/${id}`, { auto_pause_keep_memory: false, auto_pause_seconds: 1 });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(patched.body.auto_pause_keep_memory, false);
  await exec(id, 'echo kept > /tmp/auto');
  const paused = await waitFor('auto-pause', async () => {
    const v = (await api.get(`/sandboxes/${id}`)).body;
    return v.status === 'paused' ? v : undefined;
  });
  assert.equal(paused.kept_memory, false);
  assert.equal(paused.latest_snapshot_id, undefined);
  assert.equal((await exec(id, 'cat /tmp/auto')).stdout, 'kept\n', 'the exec booted it on its disk');
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
});

test('a paused sandbox survives a server restart and continues where it was', async () => {
  const sb = await api.post('/sandboxes', {});
  const id = sb.body.id;
  await exec(id, COUNTER);
  await waitFor('the counter', async () => ((await count(id)) > 3 ? true : undefined));
  assert.equal((await api.post(`/sandboxes/${id}/pause`)).status, 200);
  const atPause = await count(id).catch(() => 0);
  // That exec auto-resumed it: pause again, then restart the server while it is paused.
  assert.equal((await api.post(`/sandboxes/${id}/pause`)).status, 200);
  await srv.kill9();
  await srv.launch();
  const got = await api.get(`/sandboxes/${id}`);
  assert.equal(got.body.status, 'paused', 'still paused after the restart');
  const resumed = await api.post(`/sandboxes/${id}/resume`);
  assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
  const n1 = await count(id);
  await new Promise((r) => setTimeout(r, 300));
  const n2 = await count(id);
  assert.ok(n1 >= atPause && n2 > n1, `the counter continues from where it was (${atPause} -> ${n1} -> ${n2})`);
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
});

test('killed during a checkpoint: after restart the sandbox is paused on a complete checkpoint or active, never half', async () => {
  const sb = await api.post('/sandboxes', {});
  const id = sb.body.id;
  // 256 MiB of dirty memory makes the checkpoint long enough to be cut.
  await exec(id, 'python3 -c \'import time; b = bytearray(256 << 20); b[::4096] = b"x" * len(b[::4096]); time.sleep(100000)\' >/dev/null 2>&1 &');
  await exec(id, COUNTER);
  await new Promise((r) => setTimeout(r, 1500));
  const pausing = api.post(`/sandboxes/${id}/pause`).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 150));
  await srv.kill9();
  await pausing;
  await srv.launch();
  const status = (await api.get(`/sandboxes/${id}`)).body.status;
  assert.ok(status === 'paused' || status === 'active', `paused or active, got ${status}`);
  const n1 = await count(id);
  await new Promise((r) => setTimeout(r, 300));
  assert.ok((await count(id)) > n1, 'its processes run on');
  const left = (await exec(id, 'true')).exit_code;
  assert.equal(left, 0);
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
});

test('a connection on the sandbox network does not block pause: the sandbox pauses, the connection is cut, its process lives on', async () => {
  const sb = (await api.post('/sandboxes', {})).body;
  const ip = (await exec(sb.id, "ip -4 -o addr show | awk '{print $4}' | cut -d/ -f1 | grep -v '^127\\.'")).stdout.trim();
  assert.match(ip, /^\d+\.\d+\.\d+\.\d+$/);
  await exec(
    sb.id,
    `nohup python3 -c "import socket,time; s=socket.socket(); s.bind(('${ip}', 7000)); s.listen(); c=socket.create_connection(('${ip}', 7000)); time.sleep(600)" >/dev/null 2>&1 & echo $! > /tmp/py.pid`,
  );
  await waitFor('the connection', async () => ((await exec(sb.id, 'cat /proc/net/tcp')).stdout.includes(':1B58') ? true : undefined));
  const paused = await api.post(`/sandboxes/${sb.id}/pause`);
  assert.equal(paused.status, 200, JSON.stringify(paused.body));
  assert.equal(paused.body.status, 'paused');
  assert.equal((await api.post(`/sandboxes/${sb.id}/resume`)).status, 200);
  assert.equal((await exec(sb.id, 'kill -0 $(cat /tmp/py.pid) && echo alive')).stdout, 'alive\n');
  assert.doesNotMatch((await exec(sb.id, 'cat /proc/net/tcp')).stdout, /:1B58 [0-9A-F:]+ 01 /, 'the connection over the interface was cut');
  assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
});

test('a deleted file held open: pause and snapshot are refused with 409 naming it and the sandbox runs on; closed, the pause goes through; /dev/shm is fine', async () => {
  const sb = (await api.post('/sandboxes', {})).body;
  // Python's TemporaryFile in /tmp: created, deleted, kept open.
  await exec(sb.id, `nohup python3 -c "import tempfile,time; f=tempfile.TemporaryFile(); f.write(b'x' * 4096); f.flush(); time.sleep(600)" >/dev/null 2>&1 & echo $! > /tmp/tf.pid`);
  await waitFor('the deleted file', async () => ((await exec(sb.id, 'ls -l /proc/$(cat /tmp/tf.pid)/fd')).stdout.includes('(deleted)') ? true : undefined));
  const refused = await api.post(`/sandboxes/${sb.id}/pause`);
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.equal(refused.body.error.code, 'conflict');
  assert.match(refused.body.error.message, /deleted file\(s\) open: \/tmp\/\S+ \(process \d+ \(python3\)\)/);
  assert.equal((await api.post(`/sandboxes/${sb.id}/snapshot`, {})).status, 409);
  const live = await api.get(`/sandboxes/${sb.id}`);
  assert.equal(live.body.status, 'active');
  assert.equal((await exec(sb.id, 'kill -0 $(cat /tmp/tf.pid) && echo alive')).stdout, 'alive\n');
  // A deleted file in memory (tmpfs) is saved with the sandbox.
  await exec(sb.id, 'kill $(cat /tmp/tf.pid); nohup bash -c "exec 3>/dev/shm/gone; rm /dev/shm/gone; sleep 600" >/dev/null 2>&1 & echo $! > /tmp/shm.pid');
  await waitFor('the python process gone', async () => ((await exec(sb.id, 'kill -0 $(cat /tmp/tf.pid) 2>/dev/null || echo gone')).stdout === 'gone\n' ? true : undefined));
  const paused = await api.post(`/sandboxes/${sb.id}/pause`);
  assert.equal(paused.status, 200, JSON.stringify(paused.body));
  assert.equal((await api.post(`/sandboxes/${sb.id}/resume`)).status, 200);
  assert.equal((await exec(sb.id, 'kill -0 $(cat /tmp/shm.pid) && echo alive')).stdout, 'alive\n');
  assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
});

// The engine's headroom must be in place while a restore loads the sandbox's memory, not only once runsc returns.
test('a nearly full sandbox pauses and resumes again and again with every process and the memory it sees', async () => {
  const sb = await api.post('/sandboxes', {});
  assert.equal(sb.status, 201, JSON.stringify(sb.body));
  const id = sb.body.id;
  // Resident, not just reserved: every page is written.
  // Three processes, as the failure was seen: each adds the engine's own memory beside the sandbox's.
  for (const mib of [600, 150, 195]) {
    await exec(id, `nohup python3 -c "import time; a = [bytearray(b'x' * 2**20) for _ in range(${mib})]; open('/tmp/held-${mib}', 'w').write('1'); time.sleep(1e6)" >/dev/null 2>&1 &`);
  }
  await waitFor('the memory held', async () => ((await exec(id, 'cat /tmp/held-* 2>/dev/null')).stdout === '111' ? true : undefined), 60_000);
  const meminfo = async () => {
    const out = (await exec(id, "awk '/^MemTotal|^MemAvailable/ { print $2 }' /proc/meminfo; pgrep -fc '[r]ange.[0-9]'")).stdout.trim().split('\n').map(Number);
    return { totalKib: out[0], availableKib: out[1] ?? 0, holders: out[2] };
  };
  const before = await meminfo();
  assert.ok(before.availableKib < 150 * 1024, `the sandbox is nearly full: ${JSON.stringify(before)}`);
  for (let round = 1; round <= 3; round++) {
    assert.equal((await api.post(`/sandboxes/${id}/pause`)).status, 200);
    const resumed = await api.post(`/sandboxes/${id}/resume`);
    assert.equal(resumed.status, 200, `round ${round}: ${JSON.stringify(resumed.body)}`);
    const after = await meminfo();
    assert.equal(after.holders, 3, `round ${round}: the processes holding the memory live`);
    assert.equal(after.totalKib, before.totalKib, `round ${round}: the engine's headroom is not the sandbox's memory`);
  }
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
});
