import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CommandExitError, FileType, Sandbox, SandboxNotFoundError } from 'e2b';
import { Sandbox as OldSandbox } from 'e2b-v2old';
import { Api, freePort, ServerProcess } from './helpers/server-process.ts';

/**
 * The unmodified E2B SDKs (newest 2.x, and 2.7.0 which uses the pre-v2 paths) against Sandpit's
 * E2B port, configured only through E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY.
 */
let server: ServerProcess;
let e2bUrl: string;

before(async () => {
  const port = await freePort();
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_E2B_PORT: String(port) });
  e2bUrl = `http://127.0.0.1:${port}`;
  process.env.E2B_API_URL = e2bUrl;
  process.env.E2B_SANDBOX_URL = e2bUrl;
  process.env.E2B_API_KEY = server.key;
});
after(async () => {
  await server?.stop();
});

async function until(fn: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

const text = (chunks: string[]) => chunks.join('');

test('GET /info names the E2B port', async () => {
  const info = await new Api(server.url).get('/info');
  assert.equal(info.status, 200);
  assert.equal(new URL(info.body.e2b_api_url).port, new URL(e2bUrl).port);
});

describe('newest SDK', () => {
  let sbx: Sandbox;
  before(async () => {
    sbx = await Sandbox.create({ timeoutMs: 120_000, metadata: { suite: 'e2b-main' }, envs: { GREETING: 'hello' } });
  });
  after(async () => {
    await sbx?.kill();
  });

  test('commands: streamed output, exit errors, users, env, cwd', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const r = await sbx.commands.run('echo "$GREETING"; echo oops >&2; whoami; pwd', { onStdout: (d) => void out.push(d), onStderr: (d) => void err.push(d) });
    assert.deepEqual([r.exitCode, r.stdout, r.stderr], [0, 'hello\nuser\n/home/user\n', 'oops\n']);
    assert.equal(text(out), r.stdout);
    assert.equal(text(err), 'oops\n');
    const root = await sbx.commands.run('whoami; pwd', { user: 'root' });
    assert.equal(root.stdout, 'root\n/root\n');
    const env = await sbx.commands.run('echo "$A" && pwd', { envs: { A: 'b c' }, cwd: '/tmp' });
    assert.equal(env.stdout, 'b c\n/tmp\n');
    await assert.rejects(sbx.commands.run('echo partial; exit 3'), (e: unknown) => {
      assert.ok(e instanceof CommandExitError);
      assert.deepEqual([e.exitCode, e.stdout], [3, 'partial\n']);
      return true;
    });
  });

  test('commands: background, list, connect, stdin, kill', async () => {
    const bg = await sbx.commands.run('for i in $(seq 1 1000); do echo tick $i; sleep 0.1; done', { background: true, timeoutMs: 0 });
    assert.ok(bg.pid > 0);
    assert.ok((await sbx.commands.list()).some((p) => p.pid === bg.pid && p.cmd === '/bin/bash'));
    const seen: string[] = [];
    const attached = await sbx.commands.connect(bg.pid, { onStdout: (d) => void seen.push(d), timeoutMs: 0 });
    assert.ok(await until(async () => /tick \d+/.test(text(seen))));
    assert.equal(await bg.kill(), true);
    await assert.rejects(attached.wait(), CommandExitError);
    assert.equal(await sbx.commands.kill(bg.pid), false);
    assert.ok(!(await sbx.commands.list()).some((p) => p.pid === bg.pid));

    const cat = await sbx.commands.run('cat; echo done', { background: true, stdin: true });
    await sbx.commands.sendStdin(cat.pid, 'line one\n');
    await sbx.commands.sendStdin(cat.pid, 'line two\n');
    await sbx.commands.closeStdin(cat.pid);
    const res = await cat.wait();
    assert.equal(res.stdout, 'line one\nline two\ndone\n');
    // Without stdin: true the command reads end-of-file at once.
    assert.equal((await sbx.commands.run('cat; echo eof')).stdout, 'eof\n');
  });

  test('pty: create, input, resize, kill', async () => {
    const data: Buffer[] = [];
    const term = await sbx.pty.create({ cols: 80, rows: 24, onData: (d) => void data.push(Buffer.from(d)), timeoutMs: 0 });
    const seen = () => Buffer.concat(data).toString('utf8');
    await sbx.pty.sendInput(term.pid, new TextEncoder().encode('stty size\n'));
    assert.ok(await until(async () => seen().includes('24 80')), seen());
    await sbx.pty.resize(term.pid, { cols: 120, rows: 40 });
    await sbx.pty.sendInput(term.pid, new TextEncoder().encode('stty size\n'));
    assert.ok(await until(async () => seen().includes('40 120')), seen());
    assert.equal(await sbx.pty.kill(term.pid), true);
    await assert.rejects(term.wait());
    assert.equal(await sbx.pty.kill(term.pid), false);
  });

  test('files: write, read, list with depth, dirs, rename, remove, stream upload', async () => {
    const info = await sbx.files.write('notes/a.txt', 'alpha');
    assert.deepEqual([info.name, info.path], ['a.txt', '/home/user/notes/a.txt']);
    assert.equal(await sbx.files.read('/home/user/notes/a.txt'), 'alpha');
    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    await sbx.files.write('notes/bin.dat', bytes.buffer);
    assert.deepEqual([...(await sbx.files.read('notes/bin.dat', { format: 'bytes' }))], [...bytes]);
    const many = await sbx.files.write([
      { path: 'notes/deep/b.txt', data: 'beta' },
      { path: '/tmp/c.txt', data: 'gamma' },
    ]);
    assert.equal(many.length, 2);
    assert.equal(await sbx.files.read('/tmp/c.txt'), 'gamma');
    // A stream body goes as application/octet-stream.
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('streamed '));
        c.enqueue(new TextEncoder().encode('content'));
        c.close();
      },
    });
    await sbx.files.write('notes/streamed.txt', stream);
    assert.equal(await sbx.files.read('notes/streamed.txt'), 'streamed content');
    assert.equal((await sbx.files.write('/root/owned.txt', 'root only', { user: 'root' })).path, '/root/owned.txt');
    await assert.rejects(sbx.files.read('/root/owned.txt'));
    assert.equal(await sbx.files.read('/root/owned.txt', { user: 'root' }), 'root only');

    const top = await sbx.files.list('notes');
    assert.deepEqual(top.map((e) => `${e.name}:${e.type}`).sort(), ['a.txt:file', 'bin.dat:file', 'deep:dir', 'streamed.txt:file']);
    const deep = await sbx.files.list('notes', { depth: 2 });
    assert.ok(deep.some((e) => e.path === '/home/user/notes/deep/b.txt'));
    const stat = await sbx.files.getInfo('notes/a.txt');
    assert.deepEqual([stat.type, stat.size, stat.permissions], [FileType.FILE, 5, '-rw-r--r--']);
    assert.equal(await sbx.files.exists('notes/a.txt'), true);
    assert.equal(await sbx.files.exists('notes/none'), false);
    assert.equal(await sbx.files.makeDir('notes/new/sub'), true);
    assert.equal(await sbx.files.makeDir('notes/new/sub'), false);
    const moved = await sbx.files.rename('notes/a.txt', 'notes/new/a2.txt');
    assert.equal(moved.path, '/home/user/notes/new/a2.txt');
    await sbx.files.remove('notes/new');
    assert.equal(await sbx.files.exists('notes/new'), false);
    // As envd's os.RemoveAll: removing what is already gone is no error.
    await sbx.files.remove('notes/new');
    await assert.rejects(sbx.files.read('notes/missing.txt'), /not found|no such/i);
  });

  test('files: watchDir reports changes', async () => {
    await sbx.files.makeDir('watched');
    const events: { name: string; type: string }[] = [];
    const handle = await sbx.files.watchDir('watched', (e) => void events.push({ name: e.name, type: e.type }), { recursive: true });
    await sbx.files.write('watched/one.txt', '1');
    await sbx.files.write('watched/one.txt', 'rewritten');
    await sbx.files.makeDir('watched/sub');
    await sbx.files.write('watched/sub/two.txt', '2');
    await sbx.files.remove('watched/one.txt');
    const has = (name: string, type: string) => events.some((e) => e.name === name && e.type === type);
    assert.ok(await until(async () => has('one.txt', 'create') && has('one.txt', 'write') && has('sub/two.txt', 'create') && has('one.txt', 'remove')), JSON.stringify(events));
    await handle.stop();
  });

  test('files: watchDir with includeEntry (envd 0.6.3) gives each event the entry of its path, where it still exists; allowNetworkMounts (0.6.4) is taken', async () => {
    await sbx.files.makeDir('watched-entries');
    await sbx.files.write('watched-entries/a.txt', 'one');
    const events: { name: string; type: string; entry?: { name: string; path: string; type?: string; size: number } }[] = [];
    const handle = await sbx.files.watchDir('watched-entries', (e) => void events.push({ name: e.name, type: e.type, entry: e.entry }), { includeEntry: true, allowNetworkMounts: true });
    await sbx.files.write('watched-entries/a.txt', 'four');
    // The entry is read when the event is sent: the file must still be there then (a loaded run removed it first).
    assert.ok(await until(async () => events.some((e) => e.type === 'write' && e.entry)), JSON.stringify(events));
    await sbx.files.remove('watched-entries/a.txt');
    assert.ok(await until(async () => events.some((e) => e.type === 'remove')), JSON.stringify(events));
    await handle.stop();
    const written = events.find((e) => e.type === 'write' && e.entry);
    assert.ok(written, JSON.stringify(events));
    assert.ok(
      events.every((e) => !/^#\d+$/.test(e.name)),
      `an upload's unnamed inode is not reported: ${JSON.stringify(events)}`,
    );
    assert.deepEqual([written.entry!.name, written.entry!.path, written.entry!.type], ['a.txt', '/home/user/watched-entries/a.txt', FileType.FILE]);
    assert.equal(events.find((e) => e.type === 'remove')!.entry, undefined, 'a removed path has no entry');
    // Without the option, no entry (as before 0.6.3).
    const plain: { entry?: unknown }[] = [];
    const h2 = await sbx.files.watchDir('watched-entries', (e) => void plain.push({ entry: e.entry }));
    await sbx.files.write('watched-entries/b.txt', 'x');
    assert.ok(await until(async () => plain.length > 0));
    await h2.stop();
    assert.ok(plain.every((e) => e.entry === undefined));
  });

  test("the polling watcher (the Python SDK's) over Connect's unary JSON calls", async () => {
    const headers = {
      'content-type': 'application/json',
      'e2b-sandbox-id': sbx.sandboxId,
      'e2b-sandbox-port': '49983',
      'x-access-token': (sbx as unknown as { envdAccessToken: string }).envdAccessToken,
    };
    const call = async (method: string, body: unknown) => {
      const res = await fetch(`${e2bUrl}/filesystem.Filesystem/${method}`, { method: 'POST', headers, body: JSON.stringify(body) });
      return { status: res.status, body: await res.json() };
    };
    await sbx.files.makeDir('polled');
    const created = await call('CreateWatcher', { path: '/home/user/polled', recursive: false });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    await sbx.files.write('polled/p.txt', 'x');
    const names: string[] = [];
    assert.ok(
      await until(async () => {
        const got = await call('GetWatcherEvents', { watcherId: created.body.watcherId });
        names.push(...got.body.events.map((e: { name: string; type: string }) => `${e.name}:${e.type}`));
        return names.includes('p.txt:EVENT_TYPE_CREATE');
      }),
      JSON.stringify(names),
    );
    assert.deepEqual((await call('RemoveWatcher', { watcherId: created.body.watcherId })).body, {});
    const gone = await call('GetWatcherEvents', { watcherId: created.body.watcherId });
    assert.deepEqual([gone.status, gone.body.code], [404, 'not_found']);
  });

  test('other ports: public by default, as on E2B; made with allowPublicTraffic false, reached only with its traffic token', async () => {
    const via = (id: string, extra: Record<string, string> = {}) => fetch(`${e2bUrl}/`, { headers: { 'e2b-sandbox-id': id, 'e2b-sandbox-port': '8000', ...extra } });
    await sbx.commands.run('python3 -m http.server 8000', { background: true });
    assert.ok(await until(async () => (await via(sbx.sandboxId)).status === 200), 'a port of a default sandbox answers without a token');
    assert.equal((await Sandbox.getInfo(sbx.sandboxId)).network?.allowPublicTraffic, true);
    const closed = await Sandbox.create({ timeoutMs: 120_000, network: { allowPublicTraffic: false } });
    try {
      assert.ok(closed.trafficAccessToken, 'the create answers a traffic token');
      await closed.commands.run('python3 -m http.server 8000', { background: true });
      assert.ok(await until(async () => (await via(closed.sandboxId, { 'e2b-traffic-access-token': closed.trafficAccessToken! })).status === 200));
      const refused = await via(closed.sandboxId);
      assert.equal(refused.status, 403);
      assert.equal((await refused.json()).code, 403);
      assert.equal((await via(closed.sandboxId, { 'e2b-traffic-access-token': `${closed.sandboxId}.wrong` })).status, 403);
      assert.equal((await Sandbox.getInfo(closed.sandboxId)).network?.allowPublicTraffic, false);
    } finally {
      await closed.kill();
    }
    const bad = await fetch(`${e2bUrl}/sandboxes`, {
      method: 'POST',
      headers: { 'x-api-key': server.key, 'content-type': 'application/json' },
      body: JSON.stringify({ templateID: 'base', network: { allowPublicTraffic: 'no' } }),
    });
    assert.equal(bad.status, 400);
  });

  test('getInfo, list with a metadata filter and paging', async () => {
    const info = await sbx.getInfo();
    assert.deepEqual([info.sandboxId, info.templateId, info.state, info.metadata.suite], [sbx.sandboxId, 'base', 'running', 'e2b-main']);
    const extra = await Promise.all([1, 2].map(() => Sandbox.create({ timeoutMs: 60_000, metadata: { suite: 'e2b-paging' } })));
    try {
      const pager = Sandbox.list({ query: { metadata: { suite: 'e2b-paging' } }, limit: 1 });
      const first = await pager.nextItems();
      assert.equal(first.length, 1);
      assert.equal(pager.hasNext, true);
      const second = await pager.nextItems();
      assert.equal(second.length, 1);
      assert.deepEqual([...first, ...second].map((s) => s.sandboxId).sort(), extra.map((s) => s.sandboxId).sort());
      if (pager.hasNext) assert.equal((await pager.nextItems()).length, 0);
      const mine = await Sandbox.list({ query: { metadata: { suite: 'e2b-main' }, state: ['running'] } }).nextItems();
      assert.deepEqual(
        mine.map((s) => s.sandboxId),
        [sbx.sandboxId],
      );
    } finally {
      await Promise.all(extra.map((s) => s.kill()));
    }
  });

  test('pause, isRunning false, connect resumes with processes and files intact', async () => {
    const s = await Sandbox.create({ timeoutMs: 60_000 });
    try {
      await s.files.write('state.txt', 'kept');
      // Replaced by rename: a read never meets the file truncated (a pause may land between truncate and write).
      const counter = await s.commands.run('i=0; while true; do i=$((i+1)); echo $i > /tmp/count.new && mv /tmp/count.new /tmp/count; sleep 0.2; done', { background: true, timeoutMs: 0 });
      const count = async (sb: Sandbox) => Number((await sb.files.read('/tmp/count').catch(() => '0')).trim());
      assert.ok(await until(async () => (await count(s)) >= 2));
      assert.equal(await s.pause(), true);
      assert.equal(await s.isRunning(), false);
      assert.equal((await Sandbox.getInfo(s.sandboxId)).state, 'paused');
      assert.equal(await Sandbox.pause(s.sandboxId), false);
      const again = await Sandbox.connect(s.sandboxId, { timeoutMs: 60_000 });
      assert.equal(await again.isRunning(), true);
      assert.equal(await again.files.read('state.txt'), 'kept');
      const before = await count(again);
      assert.ok(before >= 2);
      assert.ok(await until(async () => (await count(again)) > before));
      assert.ok((await again.commands.list()).some((p) => p.pid === counter.pid));
      // Connecting to a running sandbox is fine too.
      assert.equal(await (await Sandbox.connect(s.sandboxId)).isRunning(), true);
    } finally {
      await s.kill();
    }
  });

  test('writing files under a directory the user cannot create makes it, as envd does, and gives it to the user', async () => {
    const s = await Sandbox.create({ timeoutMs: 60_000 });
    try {
      const written = await s.files.write([
        { path: '/0/a.txt', data: 'a' },
        { path: '/0/deeper/b.txt', data: 'b' },
      ]);
      assert.deepEqual(
        written.map((w) => w.path),
        ['/0/a.txt', '/0/deeper/b.txt'],
      );
      assert.equal((await s.commands.run('stat -c %U /0 /0/deeper /0/a.txt; cat /0/deeper/b.txt')).stdout, 'user\nuser\nuser\nb');
      await assert.rejects(s.files.write('/etc/shadow', 'x'), /permission denied|403/i, 'an existing file stays protected');
    } finally {
      await s.kill();
    }
  });

  test('file metadata (envd 0.6.2): set on write, shown by getInfo, list and rename, cleared by a plain overwrite, dropped with the file', async () => {
    const info = await sbx.files.write('meta/a.txt', 'a', { metadata: { author: 'mish', purpose: 'upload' } });
    assert.deepEqual(info.metadata, { author: 'mish', purpose: 'upload' });
    assert.deepEqual((await sbx.files.getInfo('meta/a.txt')).metadata, { author: 'mish', purpose: 'upload' });
    const many = await sbx.files.writeFiles(
      [
        { path: 'meta/b.txt', data: 'b' },
        { path: 'meta/c.txt', data: 'c' },
      ],
      { metadata: { source: 'suite' } },
    );
    assert.deepEqual(
      many.map((w) => w.metadata),
      [{ source: 'suite' }, { source: 'suite' }],
    );
    const listed = await sbx.files.list('meta');
    assert.deepEqual(
      listed.map((e) => [e.name, e.metadata]),
      [
        ['a.txt', { author: 'mish', purpose: 'upload' }],
        ['b.txt', { source: 'suite' }],
        ['c.txt', { source: 'suite' }],
      ],
    );
    assert.deepEqual((await sbx.files.rename('meta/a.txt', 'meta/renamed.txt')).metadata, { author: 'mish', purpose: 'upload' });
    assert.equal((await sbx.files.getInfo('meta/b.txt', {})).metadata?.source, 'suite');
    assert.equal((await sbx.files.write('meta/b.txt', 'plain')).metadata, undefined);
    assert.equal((await sbx.files.getInfo('meta/b.txt')).metadata, undefined);
    // A directory's removal drops what its files carried: a new file there starts without.
    await sbx.files.remove('meta');
    await sbx.files.write('meta/renamed.txt', 'new');
    assert.equal((await sbx.files.getInfo('meta/renamed.txt')).metadata, undefined);
    // The server checks too: a value too long is 400, and nothing is written.
    const url = `${e2bUrl}/files?path=${encodeURIComponent('/home/user/meta/refused.txt')}&username=user`;
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/octet-stream',
        'x-metadata-big': 'x'.repeat(2000),
        'e2b-sandbox-id': sbx.sandboxId,
        'e2b-sandbox-port': '49983',
        'x-access-token': (sbx as any).envdAccessToken ?? '',
      },
      body: 'x',
    });
    assert.equal(res.status, 400, await res.text());
    assert.equal(await sbx.files.exists('meta/refused.txt'), false);
  });

  test('pause({ keepMemory: false }): processes end, files stay, connect boots it again', async () => {
    const s = await Sandbox.create({ timeoutMs: 60_000, envs: { FROM_CREATE: 'kept' } });
    try {
      await s.files.write('fs-only.txt', 'kept');
      await s.commands.run('sleep 1000', { background: true, timeoutMs: 0 });
      assert.equal(await s.pause({ keepMemory: false }), true);
      assert.equal((await Sandbox.getInfo(s.sandboxId)).state, 'paused');
      const again = await s.connect();
      assert.equal(await again.isRunning(), true);
      assert.equal(await again.files.read('fs-only.txt'), 'kept');
      assert.equal((await again.commands.run('echo "$FROM_CREATE"; pgrep -x sleep || echo none')).stdout, 'kept\nnone\n');
    } finally {
      await s.kill();
    }
  });

  test("connect({ onResume: 'reboot' }) boots a paused sandbox from its disk instead of restoring it", async () => {
    const s = await Sandbox.create({ timeoutMs: 60_000 });
    try {
      await s.files.write('reboot.txt', 'kept');
      await s.commands.run('sleep 1000', { background: true, timeoutMs: 0 });
      assert.equal(await s.pause(), true);
      const again = await Sandbox.connect(s.sandboxId, { onResume: 'reboot' });
      assert.equal(await again.files.read('reboot.txt'), 'kept');
      assert.equal((await again.commands.run('pgrep -x sleep || echo none')).stdout, 'none\n');
    } finally {
      await s.kill();
    }
  });

  test('a filesystem-only auto-pause cannot be combined with auto-resume; a bad memory flag is refused', async () => {
    const res = await fetch(`${e2bUrl}/sandboxes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': server.key },
      body: JSON.stringify({ templateID: 'base', autoPause: true, autoPauseMemory: false, autoResume: { enabled: true } }),
    });
    assert.equal(res.status, 400);
    assert.match((await res.json()).message, /autoResume/);
    const s = await Sandbox.create({ timeoutMs: 60_000 });
    try {
      const bad = await fetch(`${e2bUrl}/sandboxes/${s.sandboxId}/pause`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': server.key },
        body: JSON.stringify({ memory: 'no' }),
      });
      assert.equal(bad.status, 400);
      assert.equal(await s.isRunning(), true, 'nothing changed');
    } finally {
      await s.kill();
    }
  });

  test('setTimeout: the sandbox is gone when it expires', async () => {
    const s = await Sandbox.create({ timeoutMs: 60_000 });
    await s.setTimeout(1_000);
    assert.ok(await until(async () => !(await s.isRunning()), 15_000));
    // Not running from the moment the deadline passes; gone once the engine has let go of it.
    const gone = () =>
      Sandbox.getInfo(s.sandboxId).then(
        () => false,
        (e: unknown) => e instanceof SandboxNotFoundError,
      );
    assert.ok(await until(gone, 15_000));
    assert.equal(await Sandbox.kill(s.sandboxId), false);
  });

  test('kill returns true, then false; wrong keys are refused', async () => {
    const s = await Sandbox.create({ timeoutMs: 60_000 });
    assert.equal(await s.kill(), true);
    assert.equal(await s.kill(), false);
    assert.equal(await s.isRunning(), false);
    await assert.rejects(Sandbox.create({ apiKey: 'e2b_0000' }), /401|invalid API key/i);
  });
});

test('an e2b_-shaped Sandpit key works as the E2B API key', async () => {
  const res = await new Api(server.url, server.key).post('/api-keys', { name: 'for-e2b', format: 'e2b' });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.match(res.body.key, /^e2b_[0-9a-f]{40}$/);
  const s = await Sandbox.create({ apiKey: res.body.key, timeoutMs: 30_000 });
  assert.equal((await s.commands.run('echo ok')).stdout, 'ok\n');
  assert.equal(await Sandbox.kill(s.sandboxId, { apiKey: res.body.key }), true);
});

describe('SDK 2.7.0 (pre-v2 paths)', () => {
  test('pre-v2 resume answers 409 while running and 201 once paused, with E2B error bodies', async () => {
    const s = await OldSandbox.create({ timeoutMs: 60_000 });
    try {
      const resume = () =>
        fetch(`${e2bUrl}/sandboxes/${s.sandboxId}/resume`, { method: 'POST', headers: { 'x-api-key': server.key, 'content-type': 'application/json' }, body: JSON.stringify({ timeout: 60 }) });
      const running = await resume();
      assert.equal(running.status, 409);
      assert.equal((await running.json()).code, 409);
      assert.equal(await s.betaPause(), true);
      const resumed = await resume();
      assert.equal(resumed.status, 201);
      assert.equal((await resumed.json()).sandboxID, s.sandboxId);
      assert.equal(await s.isRunning(), true);
    } finally {
      await s.kill();
    }
  });

  test('create, run, files, pause, connect, list, kill', async () => {
    const s = await OldSandbox.create({ timeoutMs: 60_000, metadata: { suite: 'e2b-old' } });
    try {
      const out: string[] = [];
      const r = await s.commands.run('echo old; exit 0', { onStdout: (d) => void out.push(d) });
      assert.equal(r.stdout, 'old\n');
      assert.equal(text(out), 'old\n');
      await s.files.write('old.txt', 'v2.0');
      assert.equal(await s.files.read('old.txt'), 'v2.0');
      const listed = await OldSandbox.list({ query: { metadata: { suite: 'e2b-old' } } }).nextItems();
      assert.deepEqual(
        listed.map((x) => x.sandboxId),
        [s.sandboxId],
      );
      assert.equal(await s.betaPause(), true);
      assert.equal(await s.isRunning(), false);
      const again = await OldSandbox.connect(s.sandboxId, { timeoutMs: 60_000 });
      assert.equal(await again.files.read('old.txt'), 'v2.0');
      assert.equal((await again.commands.run('echo back')).stdout, 'back\n');
    } finally {
      assert.equal(await OldSandbox.kill(s.sandboxId), true);
    }
    assert.equal(await OldSandbox.kill(s.sandboxId), false);
  });
});

describe('gVisor: pause keeps a running process through the E2B API', () => {
  let gvisor: ServerProcess;
  let url: string;
  before(async () => {
    const port = await freePort();
    gvisor = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_E2B_PORT: String(port) });
    url = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    await gvisor?.stop();
  });

  test('betaPause, then connect: a background counter keeps counting', async () => {
    const opts = { apiUrl: url, sandboxUrl: url, apiKey: gvisor.key };
    const s = await Sandbox.create({ ...opts, timeoutMs: 120_000 });
    try {
      // Replaced by rename: a read never meets the file truncated (a pause may land between truncate and write).
      await s.commands.run('i=0; while true; do i=$((i+1)); echo $i > /tmp/count.new && mv /tmp/count.new /tmp/count; sleep 0.2; done', { background: true, timeoutMs: 0 });
      const count = async (sb: Sandbox) => Number((await sb.files.read('/tmp/count').catch(() => '0')).trim());
      assert.ok(await until(async () => (await count(s)) >= 2));
      assert.equal(await s.betaPause(), true);
      assert.equal(await s.isRunning(), false);
      const again = await Sandbox.connect(s.sandboxId, { ...opts, timeoutMs: 120_000 });
      const before = await count(again);
      assert.ok(before >= 2);
      assert.ok(await until(async () => (await count(again)) > before, 20_000));
    } finally {
      await s.kill();
    }
  });

  test('an auto-pause that keeps only the filesystem: connect cold-boots it (a new boot id), the files stay', async () => {
    const opts = { apiUrl: url, sandboxUrl: url, apiKey: gvisor.key };
    const s = await Sandbox.create({ ...opts, timeoutMs: 2_000, lifecycle: { onTimeout: { action: 'pause', keepMemory: false } } });
    try {
      await s.files.write('/home/user/marker.txt', 'fs-only');
      const boot = async (sb: Sandbox) => (await sb.commands.run('cat /proc/sys/kernel/random/boot_id')).stdout.trim();
      const before = await boot(s);
      assert.ok(await until(async () => (await Sandbox.getInfo(s.sandboxId, opts)).state === 'paused', 20_000));
      const again = await s.connect({ timeoutMs: 60_000 });
      assert.equal(await again.files.read('/home/user/marker.txt'), 'fs-only');
      assert.notEqual(await boot(again), before);
    } finally {
      await s.kill();
    }
  });
});
