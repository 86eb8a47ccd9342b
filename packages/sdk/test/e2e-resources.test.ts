import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ServerProcess } from '../../server/test/helpers/server-process.ts';
import { ConflictError, NotFoundError, Sandbox, SandpitClient, ServerError, type FileWatchEvent } from '../src/index.ts';

const MiB = 1024 * 1024;

/** `size` bytes of a repeatable pseudo-random pattern, produced a chunk at a time (never held whole). */
function patternStream(size: number, hash: ReturnType<typeof createHash>): ReadableStream<Uint8Array> {
  let sent = 0;
  let seed = 12345;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const chunk = new Uint8Array(Math.min(MiB, size - sent));
      for (let i = 0; i < chunk.length; i += 4) {
        seed = (seed * 1103515245 + 12345) >>> 0;
        chunk[i] = seed & 0xff;
        chunk[i + 1] = (seed >>> 8) & 0xff;
        chunk[i + 2] = (seed >>> 16) & 0xff;
        chunk[i + 3] = seed >>> 24;
      }
      hash.update(chunk);
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('SDK resources against a real server (container driver)', () => {
  let server: ServerProcess;
  let client: SandpitClient;
  let sb: Sandbox;

  before(async () => {
    server = await ServerProcess.start({ SANDPIT_DRIVER: 'container' });
    client = new SandpitClient({ apiUrl: server.url, apiKey: server.key });
    sb = await Sandbox.create({ client, name: 'sdk-resources' });
  });
  after(async () => {
    await server?.stop();
  });

  it('files: binary round trip, a 50 MiB streamed upload and download, list/stat/mkdir/rename/remove', async () => {
    const binary = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7) % 256);
    const written = await sb.files.write('data/bin.dat', binary);
    assert.equal(written.path, '/home/user/data/bin.dat');
    assert.equal(written.size, binary.length);
    assert.deepEqual(await sb.files.read('data/bin.dat'), binary);
    await sb.files.write('/tmp/héllo.txt', new Blob(['héllo wörld\n']));
    assert.equal(await sb.files.read('/tmp/héllo.txt', { format: 'text' }), 'héllo wörld\n');

    const up = createHash('sha256');
    const big = await sb.files.write('big.bin', patternStream(50 * MiB, up));
    assert.equal(big.size, 50 * MiB);
    const sum = await sb.commands.run('sha256sum big.bin');
    assert.equal(sum.stdout.split(' ')[0], up.digest('hex'));
    const down = createHash('sha256');
    let got = 0;
    for await (const chunk of await sb.files.read('big.bin', { format: 'stream' })) {
      down.update(chunk);
      got += chunk.length;
    }
    assert.equal(got, 50 * MiB);
    assert.equal(down.digest('hex'), sum.stdout.split(' ')[0]);

    assert.equal((await sb.files.mkdir('tree/a/b')).type, 'dir');
    await sb.files.write('tree/a/one.txt', 'one');
    assert.deepEqual(
      (await sb.files.list('tree/a')).map((e) => [e.name, e.type]),
      [
        ['b', 'dir'],
        ['one.txt', 'file'],
      ],
    );
    const stat = await sb.files.stat('tree/a/one.txt');
    assert.equal(stat.size, 3);
    assert.equal(stat.permissions.length, 9);
    assert.equal((await sb.files.rename('tree/a/one.txt', 'tree/two.txt')).path, '/home/user/tree/two.txt');
    await assert.rejects(sb.files.stat('tree/a/one.txt'), NotFoundError);
    await assert.rejects(sb.files.remove('tree'), ConflictError);
    await sb.files.remove('tree', { recursive: true });
    await assert.rejects(sb.files.list('tree'), NotFoundError);
  });

  it('files: watch sees a file appear', async () => {
    await sb.files.mkdir('watched');
    const events: FileWatchEvent[] = [];
    const watch = await sb.files.watch('watched', { onEvent: (e) => events.push(e) });
    try {
      await sb.files.write('watched/new.txt', 'x');
      await until('a watch event', () => events.some((e) => e.path === '/home/user/watched/new.txt'));
    } finally {
      watch.close();
    }
    await watch.done;
  });

  it('terminals: type into a PTY over WebSocket, resize, exit code', async () => {
    const info = await sb.terminals.create({ cols: 80, rows: 24, command: 'bash --norc -i' });
    assert.equal(info.running, true);
    assert.ok((await sb.terminals.list()).some((t) => t.id === info.id));
    const term = await sb.terminals.connect(info.id);
    let out = '';
    const decoder = new TextDecoder();
    term.onData((d) => (out += decoder.decode(d, { stream: true })));
    term.write('echo hi-$((40+2))\n');
    await until('echo output', () => out.includes('hi-42'));
    term.resize(100, 30);
    term.write('stty size\n');
    await until('the new size', () => out.includes('30 100'));
    term.write('exit 7\n');
    assert.deepEqual(await term.wait(), { exitCode: 7, signal: null });
    await assert.rejects(sb.terminals.connect('no-such-terminal'), NotFoundError);
    assert.equal(await sb.terminals.kill('no-such-terminal'), false);
  });

  it('processes: background output, stdin, a signal, kill', async () => {
    const ticker = await sb.processes.start('i=0; while true; do i=$((i+1)); echo tick$i; sleep 0.1; done');
    assert.equal(ticker.running, true);
    let streamed = '';
    const following = sb.processes.stream(ticker.id, { onStdout: (c) => (streamed += c) });
    await until('streamed ticks', () => streamed.includes('tick3'));
    assert.match((await sb.processes.output(ticker.id)).stdout, /tick1\n/);
    assert.ok((await sb.processes.list()).some((p) => p.id === ticker.id));
    await sb.processes.signal(ticker.id, 'SIGTERM');
    assert.equal((await following).exitCode, 143);
    assert.equal((await sb.processes.get(ticker.id)).running, false);

    const cat = await sb.processes.start('cat', { args: [] });
    await sb.processes.sendStdin(cat.id, 'hello ');
    await sb.processes.sendStdin(cat.id, new TextEncoder().encode('bytes\n'), { eof: true });
    assert.deepEqual(await sb.processes.stream(cat.id), { exitCode: 0 });
    assert.equal((await sb.processes.output(cat.id)).stdout, 'hello bytes\n');
    assert.equal(await sb.processes.kill(cat.id), true);
    assert.equal(await sb.processes.kill(cat.id), false);
  });

  it('snapshots: the container driver answers 503; list is empty', async () => {
    await assert.rejects(sb.snapshot({ name: 'nope', idempotencyKey: 'k1' }), (err: unknown) => err instanceof ServerError && err.status === 503);
    const pages = [];
    for await (const page of client.snapshots.list({ sandboxId: sb.id })) pages.push(page);
    assert.deepEqual(pages, [[]]);
    await assert.rejects(client.snapshots.get('00000000-0000-4000-8000-000000000000'), NotFoundError);
    assert.equal(await client.snapshots.delete('00000000-0000-4000-8000-000000000000'), false);
  });

  it('secrets, preview ports, team and billing', async () => {
    const secret = await client.secrets.create({ name: 'SDK_TOKEN', value: 's3cret', allowed_hosts: ['api.example.com'] });
    assert.deepEqual(secret.allowed_hosts, ['api.example.com']);
    assert.equal('value' in secret, false);
    assert.deepEqual(
      (await client.secrets.list()).map((s) => s.name),
      ['SDK_TOKEN'],
    );
    await assert.rejects(client.secrets.create({ name: 'SDK_TOKEN', value: 'x' }), ConflictError);
    await client.secrets.revoke('SDK_TOKEN');
    assert.deepEqual(await client.secrets.list(), []);

    const published = await sb.previewPorts.publish(8080, { access: 'private' });
    assert.equal(published.access, 'private');
    assert.ok(published.preview_token);
    assert.equal(published.url, await sb.previewUrl(8080));
    assert.deepEqual(
      (await sb.previewPorts.list()).map((p) => p.port),
      [8080],
    );
    await sb.previewPorts.unpublish(8080);
    assert.deepEqual(await sb.previewPorts.list(), []);

    const team = await client.team.management();
    assert.equal(team.team_id, (await client.me()).team_id);
    assert.ok(team.capabilities.can_invite_members);
    const invited = await client.team.invite({ email: 'dev@example.com', full_name: 'Dev', role: 'member' });
    await client.team.deactivate(invited.member.user_id);
    const after = await client.team.management();
    assert.equal(after.members.find((m) => m.user_id === invited.member.user_id)?.status, 'deactivated');

    const summary = await client.billing.summary();
    assert.equal(typeof summary.pricing_tier.currency, 'string');
    assert.ok(Array.isArray(await client.billing.periods()));
    assert.equal(typeof (await client.billing.usage()), 'object');
  });

  it('templates: build an env + run template, follow its log, create a sandbox from it', async () => {
    const created = await client.templates.create({
      name: 'sdk-tiny',
      steps: [
        { type: 'env', env: { GREETING: 'from-template' } },
        { type: 'run', command: 'echo built > /home/user/marker' },
      ],
    });
    assert.equal(created.name, 'sdk-tiny');
    const lines: string[] = [];
    const result = await client.templates.logs(created.id, created.build_id, { onLine: (l) => lines.push(l) });
    assert.deepEqual(result, { status: 'ready' }, lines.join('\n'));
    assert.equal((await client.templates.get('sdk-tiny')).status, 'ready');
    assert.ok((await client.templates.list()).some((t) => t.id === created.id));
    assert.equal((await client.templates.build(created.id, created.build_id)).status, 'ready');

    const fromTemplate = await Sandbox.create({ client, from_template: 'sdk-tiny' });
    const r = await fromTemplate.commands.run('echo "$GREETING"; cat /home/user/marker');
    assert.equal(r.stdout, 'from-template\nbuilt\n');
    await fromTemplate.kill();
    assert.equal(await client.templates.delete(created.id), true);
    assert.equal(await client.templates.delete(created.id), false);
  });
});
