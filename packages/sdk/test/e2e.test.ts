import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ServerProcess } from '../../server/test/helpers/server-process.ts';
import { ConflictError, NotFoundError, Sandbox, SandpitClient } from '../src/index.ts';

describe('SDK against a real server', () => {
  let server: ServerProcess;
  let client: SandpitClient;

  before(async () => {
    server = await ServerProcess.start();
    client = new SandpitClient({ apiUrl: server.url, apiKey: server.key });
  });
  after(async () => {
    await server?.stop();
  });

  it('discovers the data plane and the caller', async () => {
    const info = await client.info();
    assert.match(info.data_plane_url, /^http:\/\//);
    assert.match(info.sandbox_url, /\{sandbox_id\}/);
    const me = await client.me();
    assert.ok(me.permissions.includes('sandboxes:write'));
  });

  it('create, run, stream, pause/resume, kill twice', async () => {
    const sb = await Sandbox.create({ client, name: 'sdk-e2e', metadata: { suite: 'sdk' } });
    assert.equal(sb.info.status, 'active');
    assert.equal(sb.info.name, 'sdk-e2e');

    const run = await sb.commands.run('echo out; echo err >&2; exit 3');
    assert.deepEqual(run, { stdout: 'out\n', stderr: 'err\n', exitCode: 3, truncated: false });

    const argv = await sb.commands.run('printf', { args: ['%s|%s', 'a b', '$HOME'], cwd: '/tmp', env: { X: '1' } });
    assert.equal(argv.stdout, 'a b|$HOME');

    let out = '';
    let err = '';
    const streamed = await sb.commands.stream('for i in 1 2 3; do echo line$i; sleep 0.1; done; echo bad >&2; exit 5', {
      onStdout: (c) => (out += c),
      onStderr: (c) => (err += c),
    });
    assert.deepEqual(streamed, { exitCode: 5 });
    assert.equal(out, 'line1\nline2\nline3\n');
    assert.equal(err, 'bad\n');

    const control = await sb.exec('echo "$GREETING"', { env: { GREETING: 'hi' } });
    assert.deepEqual(control, { stdout: 'hi\n', stderr: '', exitCode: 0 });

    const updated = await sb.update({ name: 'sdk-e2e-renamed', metadata: { suite: 'sdk', step: 'update' } });
    assert.equal(updated.name, 'sdk-e2e-renamed');
    assert.deepEqual(sb.info.metadata, { suite: 'sdk', step: 'update' });

    await sb.commands.run('echo kept > /tmp/state');
    assert.equal((await sb.pause()).status, 'paused');
    await assert.rejects(sb.pause(), ConflictError);
    assert.equal((await Sandbox.get(sb.id, { client })).status, 'paused');
    assert.equal((await sb.resume()).status, 'active');
    assert.equal((await sb.commands.run('cat /tmp/state')).stdout, 'kept\n');
    // Only the disk kept: the background sleep ends, the file stays; then a memory pause resumed by a boot.
    await sb.commands.run('sleep 1000 >/dev/null 2>&1 &');
    assert.equal((await sb.pause({ keepMemory: false })).kept_memory, false);
    assert.equal((await sb.resume()).status, 'active');
    assert.equal((await sb.commands.run('cat /tmp/state; pgrep -x sleep || echo none')).stdout, 'kept\nnone\n');
    await sb.commands.run('sleep 1000 >/dev/null 2>&1 &');
    await sb.pause();
    await sb.resume({ keepMemory: false });
    assert.equal((await sb.commands.run('pgrep -x sleep || echo none')).stdout, 'none\n');

    // One host has no other node to move it to: 409, and it runs on.
    await assert.rejects(sb.migrate(), ConflictError);
    assert.equal((await Sandbox.get(sb.id, { client })).status, 'active');

    const connected = await Sandbox.connect(sb.id, { client });
    assert.equal(connected.accessToken, sb.accessToken);

    const listed: string[] = [];
    for await (const page of Sandbox.list({ client, metadata: { suite: 'sdk' }, limit: 1 })) listed.push(...page.map((s) => s.id));
    assert.deepEqual(listed, [sb.id]);

    assert.equal(await sb.kill(), true);
    assert.equal(await sb.kill(), false, 'the second kill swallows 404');
    await assert.rejects(Sandbox.get(sb.id, { client }), NotFoundError);
  });

  it('lists, diffs and applies changes', async () => {
    const a = await client.sandboxes.create({});
    const b = await client.sandboxes.create({});
    try {
      await client.sandboxes.exec(a.id, 'printf "hi\\n" > /home/user/note.txt');
      const page = await client.sandboxes.changes(a.id, { path: '/home/user' });
      assert.deepEqual(page.base, { kind: 'template', id: a.template_id });
      assert.deepEqual(
        page.changes.find((c) => c.path === '/home/user/note.txt'),
        { path: '/home/user/note.txt', kind: 'added', type: 'file', size: 3 },
      );
      assert.match(await client.sandboxes.changeDiff(a.id, '/home/user/note.txt'), /^\+hi$/m);
      const result = await client.sandboxes.applyChanges(b.id, a.id, ['/home/user/note.txt']);
      assert.deepEqual(result, { applied: [{ path: '/home/user/note.txt', kind: 'added' }], conflicts: [], skipped: [] });
      assert.equal((await client.sandboxes.exec(b.id, 'cat /home/user/note.txt')).stdout, 'hi\n');
      await client.sandboxes.exec(a.id, 'echo other > /home/user/note.txt');
      await client.sandboxes.exec(b.id, 'echo mine > /home/user/note.txt');
      assert.equal((await client.sandboxes.applyChanges(b.id, a.id)).conflicts[0]?.path, '/home/user/note.txt');
      await assert.rejects(client.sandboxes.applyChanges(b.id, b.id), (err: Error) => !(err instanceof ConflictError) && /same sandbox/.test(err.message));
    } finally {
      await Promise.all([client.sandboxes.kill(a.id), client.sandboxes.kill(b.id)]);
    }
  });
});
