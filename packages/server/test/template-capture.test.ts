import assert from 'node:assert/strict';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { enginePid } from './helpers/engine-process.ts';
import { Api, ServerProcess } from './helpers/server-process.ts';

// The server listens on loopback only: a checkpoint cannot save connections on the sandbox's network interface.
const TEMPLATE = {
  name: 'captured-web',
  steps: [{ type: 'env', env: { APP_MODE: 'captured' } }],
  start_cmd: 'echo "$$-$(date +%s%N)" > /tmp/started; exec python3 -m http.server 8000 --bind 127.0.0.1',
  ready_cmd: 'curl -sf http://127.0.0.1:8000/ >/dev/null',
};

async function exec(api: Api, id: string, command: string) {
  const res = await api.post(`/sandboxes/${id}/exec`, { command });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { stdout: string; stderr: string; exit_code: number };
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('template captures on the gvisor driver', () => {
  let srv: ServerProcess;
  let api: Api;
  before(async () => {
    srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor' });
    api = new Api(srv.url, srv.key);
  });
  after(async () => {
    await srv?.stop();
  });

  const engineSnapshots = () => readdir(join(srv.dataDir, 'gvisor', 'layers', '.snapshots')).catch(() => [] as string[]);

  test('sandboxes are restored from the capture with start_cmd running; caller env applies; restores are independent; delete removes it', async () => {
    const res = await api.post('/templates', TEMPLATE);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const t = await until(
      'the build',
      async () => {
        const cur = (await api.get(`/templates/${res.body.id}`)).body;
        if (cur.status === 'failed') throw new Error(cur.error);
        return cur.status === 'ready' ? cur : undefined;
      },
      60_000,
    );
    await until('the capture', async () => ((await api.get(`/templates/${t.id}`)).body.captured === true ? true : undefined));
    assert.equal((await engineSnapshots()).length, 1, 'one engine capture, kept apart from team snapshots');
    assert.deepEqual((await api.get('/snapshots')).body.snapshots, [], 'not a team Snapshot resource');

    const a = await api.post('/sandboxes', { from_template: t.id, env: { CALLER: 'alpha' } });
    assert.equal(a.status, 201, JSON.stringify(a.body));
    const b = await api.post('/sandboxes', { from_template: t.id, env: { CALLER: 'beta' } });
    assert.equal(b.status, 201, JSON.stringify(b.body));

    // The first command finds start_cmd already running and its server answering.
    const ra = await exec(
      api,
      a.body.id,
      'pgrep -f "http.server 8000" >/dev/null && echo running; cat /tmp/started; echo $CALLER $APP_MODE; curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:8000/',
    );
    const [state, markerA, envA, code] = ra.stdout.split('\n');
    assert.equal(state, 'running', ra.stderr);
    assert.match(markerA!, /^\d+-\d+$/);
    assert.equal(envA, 'alpha captured');
    assert.equal(code, '200');
    const rb = await exec(api, b.body.id, 'cat /tmp/started; echo $CALLER');
    // The same marker in both: start_cmd ran once, in the capture, not at each create.
    assert.equal(rb.stdout, `${markerA}\nbeta\n`);

    // Independent: writes and processes of one are not in the other.
    await exec(api, a.body.id, 'echo only-a > /tmp/mine; pkill -f "http.server 8000"; true');
    const rb2 = await exec(api, b.body.id, 'cat /tmp/mine 2>/dev/null || echo absent; curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:8000/');
    assert.equal(rb2.stdout, 'absent\n200');
    assert.equal((await exec(api, a.body.id, 'cat /tmp/mine')).stdout, 'only-a\n');

    // A rebuild replaces the capture: the new version is captured afresh and the old capture is removed.
    const firstCapture = (await engineSnapshots())[0];
    const rebuilt = await api.post('/templates', { ...TEMPLATE, steps: [{ type: 'env', env: { APP_MODE: 'rebuilt' } }] });
    assert.equal(rebuilt.status, 202, JSON.stringify(rebuilt.body));
    await until(
      'the rebuild and its capture',
      async () => {
        const cur = (await api.get(`/templates/${t.id}`)).body;
        if (cur.status === 'failed') throw new Error(cur.error);
        const files = await engineSnapshots();
        return cur.status === 'ready' && cur.captured === true && files.length === 1 && files[0] !== firstCapture ? true : undefined;
      },
      60_000,
    );
    const c = await api.post('/sandboxes', { from_template: t.id });
    assert.equal(c.status, 201, JSON.stringify(c.body));
    const rc = await exec(api, c.body.id, 'cat /tmp/started; echo $APP_MODE');
    assert.notEqual(rc.stdout.split('\n')[0], markerA, 'restored from the new capture');
    assert.equal(rc.stdout.split('\n')[1], 'rebuilt');

    // Deleting the template (once its sandboxes are gone) removes the capture.
    for (const sb of [a.body.id, b.body.id, c.body.id]) assert.equal((await api.del(`/sandboxes/${sb}`)).status, 204);
    assert.equal((await api.del(`/templates/${t.id}`)).status, 204);
    await until('the capture to be removed', async () => ((await engineSnapshots()).length === 0 ? true : undefined));
  });

  test('a refused capture is tried again on its own, with no create asking for it', async () => {
    // While /etc/capture-hold is in the template, the start command keeps a deleted file open, which refuses the save.
    const res = await api.post('/templates', {
      name: 'capture-retried',
      steps: [{ type: 'run', user: 'root', command: 'touch /etc/capture-hold' }],
      start_cmd: 'if [ -e /etc/capture-hold ]; then exec 3>/tmp/held; rm /tmp/held; fi; touch /tmp/started; exec sleep infinity',
      // Ready (and so captured) only once the file is held and deleted: a capture must not come before it.
      ready_cmd: 'test -e /tmp/started',
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const id = res.body.id as string;
    await until('the refused capture', async () => (srv.output.includes(`"template":"${id}"`) && /template capture failed/.test(srv.output) ? true : undefined), 90_000).catch(async (err: Error) => {
      throw new Error(`${err.message}; the template: ${JSON.stringify((await api.get(`/templates/${id}`)).body)}; the server said:\n${srv.output.slice(-3000)}`);
    });
    assert.equal((await api.get(`/templates/${id}`)).body.captured, false);
    // The template changes behind the platform's back (its layer on the host), as a passing cause would.
    const layers = join(srv.dataDir, 'templates', 'layers');
    const holding: string[] = [];
    for (const layer of await readdir(layers)) if ((await readdir(join(layers, layer, 'root', 'etc')).catch(() => [] as string[])).includes('capture-hold')) holding.push(layer);
    assert.equal(holding.length, 1);
    await rm(join(layers, holding[0]!, 'root', 'etc', 'capture-hold'));
    await until('the capture, tried again', async () => ((await api.get(`/templates/${id}`)).body.captured === true ? true : undefined), 60_000);
    assert.equal((await api.del(`/templates/${id}`)).status, 204);
  });

  test('volumes go into a sandbox restored from the capture (no boot): shared, read-only, kept by pause, a disk-only pause, a snapshot and its fork', async () => {
    const res = await api.post('/templates', {
      name: 'captured-volumes',
      start_cmd: 'echo "$$-$(date +%s%N)" > /tmp/started; exec sleep infinity',
      ready_cmd: 'test -s /tmp/started',
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const tid = res.body.id as string;
    await until('the capture', async () => ((await api.get(`/templates/${tid}`)).body.captured === true ? true : undefined), 90_000);
    const vol = await api.post('/volumes', { name: 'given', size_mib: 16 });
    assert.equal(vol.status, 201, JSON.stringify(vol.body));
    const plain = await api.post('/sandboxes', { from_template: tid });
    const a = await api.post('/sandboxes', { from_template: tid, volumes: [{ volume: 'given', path: '/data' }] });
    const b = await api.post('/sandboxes', { from_template: tid, volumes: [{ volume: 'given', path: '/mnt/ro/deep', read_only: true }] });
    for (const r of [plain, a, b]) assert.equal(r.status, 201, JSON.stringify(r.body));
    const [ida, idb] = [a.body.id as string, b.body.id as string];
    const marker = (await exec(api, plain.body.id, 'cat /tmp/started')).stdout;
    // start_cmd ran once, in the capture: the sandboxes with volumes were restored from it, not booted.
    for (const id of [ida, idb]) assert.equal((await exec(api, id, 'cat /tmp/started')).stdout, marker);

    assert.equal((await exec(api, ida, 'stat -c %U /data')).stdout.trim(), 'user', "the volume's root is the sandbox user's");
    const wrote = await exec(api, ida, 'echo hello > /data/f && cat /data/f');
    assert.deepEqual([wrote.exit_code, wrote.stdout], [0, 'hello\n'], wrote.stderr);
    assert.equal((await exec(api, idb, 'cat /mnt/ro/deep/f')).stdout, 'hello\n', 'another sandbox sees the write');
    assert.match((await exec(api, idb, 'echo no > /mnt/ro/deep/g')).stderr, /Read-only file system/);
    // Only the agent may mount: what it starts, root included, has no CAP_SYS_ADMIN (bit 21).
    const caps = await exec(api, ida, 'sudo -n grep -E "^Cap(Eff|Bnd)" /proc/self/status; sudo -n mount -t tmpfs none /mnt 2>&1 || echo refused');
    for (const line of caps.stdout.trim().split('\n').slice(0, 2)) assert.equal(BigInt(`0x${line.split(/\s+/)[1]}`) & (1n << 21n), 0n, caps.stdout);
    assert.match(caps.stdout, /refused/);

    assert.equal((await api.post(`/sandboxes/${ida}/pause`)).status, 200);
    assert.equal((await api.post(`/sandboxes/${ida}/resume`)).status, 200);
    await exec(api, ida, 'echo after-resume >> /data/f');
    assert.equal((await exec(api, idb, 'cat /mnt/ro/deep/f')).stdout, 'hello\nafter-resume\n', 'the mount survives pause and resume');

    const snap = await api.post(`/sandboxes/${ida}/snapshot`, {});
    assert.equal(snap.status, 201, JSON.stringify(snap.body));
    const fork = await api.post('/sandboxes', { from_snapshot: snap.body.id });
    assert.equal(fork.status, 201, JSON.stringify(fork.body));
    await exec(api, fork.body.id, 'echo from-fork >> /data/f');
    assert.equal((await exec(api, idb, 'tail -1 /mnt/ro/deep/f')).stdout, 'from-fork\n', 'a fork mounts the same volume, live');

    assert.equal((await api.post(`/sandboxes/${ida}/pause`, { keep_memory: false })).status, 200);
    assert.equal((await api.post(`/sandboxes/${ida}/resume`)).status, 200);
    const booted = await exec(api, ida, 'tail -1 /data/f; echo again >> /data/f && echo wrote');
    assert.equal(booted.stdout, 'from-fork\nwrote\n', `a boot after a disk-only pause mounts it too: ${booted.stderr}`);

    for (const id of [plain.body.id, ida, idb, fork.body.id]) assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
    assert.equal((await api.del(`/snapshots/${snap.body.id}`)).status, 204);
    assert.equal((await api.del('/volumes/given')).status, 204);
    assert.equal((await api.del(`/templates/${tid}`)).status, 204);
  });
});

test("a capture taken under other engine settings is taken again after a restart, and its sandboxes get today's", async () => {
  const srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_GVISOR_MIN_CPUS: '1' });
  try {
    const api = new Api(srv.url, srv.key);
    const captures = () => readdir(join(srv.dataDir, 'gvisor', 'layers', '.snapshots')).catch(() => [] as string[]);
    /** The CPU count the engine of a sandbox booted with (a restore keeps what its capture had). */
    const engineCpus = async (sandboxId: string) => (await readFile(`/proc/${await enginePid(srv.dataDir, sandboxId)}/cmdline`, 'utf8')).split('\0').find((a) => a.startsWith('--cpu-num='));
    const built = await api.post('/templates', { ...TEMPLATE, name: 'captured-settings' });
    assert.equal(built.status, 202, JSON.stringify(built.body));
    const id = built.body.id as string;
    await until('the first capture', async () => ((await api.get(`/templates/${id}`)).body.captured === true ? true : undefined), 90_000);
    const [first] = await captures();
    const a = (await api.post('/sandboxes', { from_template: id })).body.id as string;
    assert.equal(await engineCpus(a), '--cpu-num=1');
    assert.equal((await api.del(`/sandboxes/${a}`)).status, 204);

    await srv.kill9();
    srv.env.SANDPIT_GVISOR_MIN_CPUS = '2';
    await srv.launch();
    await until(
      'a new capture',
      async () => {
        const files = await captures();
        return (await api.get(`/templates/${id}`)).body.captured === true && files.length === 1 && files[0] !== first ? true : undefined;
      },
      90_000,
    );
    const b = (await api.post('/sandboxes', { from_template: id })).body.id as string;
    assert.equal(await engineCpus(b), '--cpu-num=2');
    const r = await exec(api, b, 'curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:8000/; echo; nproc');
    assert.equal(r.stdout, '200\n1\n', r.stderr);
  } finally {
    await srv.stop();
  }
});
