import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ServerProcess } from '../../server/test/helpers/server-process.ts';
import { BadRequestError, ConflictError, InsufficientStorageError, NotFoundError, Sandbox, SandpitClient, ServerError, type Volume } from '../src/index.ts';

const MiB = 1024 * 1024;

/** `chunks` chunks of `chunkSize` bytes, with no length known up front (sent chunked). */
function chunked(chunks: number, chunkSize: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent++ === chunks) return controller.close();
      controller.enqueue(new Uint8Array(chunkSize).fill(sent));
    },
  });
}

async function all(pages: AsyncGenerator<Volume[]>): Promise<Volume[]> {
  const found: Volume[] = [];
  for await (const page of pages) found.push(...page);
  return found;
}

describe('volumes through the TS SDK against a real server (container driver)', () => {
  let server: ServerProcess;
  let client: SandpitClient;
  const sandboxes: Sandbox[] = [];

  before(async () => {
    server = await ServerProcess.start({ SANDPIT_DRIVER: 'container' });
    client = new SandpitClient({ apiUrl: server.url, apiKey: server.key });
  });
  after(async () => {
    try {
      for (const sb of sandboxes) await sb.kill();
      if (client) for (const v of await all(client.volumes.list())) await client.volumes.delete(v.id);
    } finally {
      await server?.stop();
    }
  });

  it('create, list in pages, get by id or name, grow, delete; conflicts and bad input are typed errors', async () => {
    const a = await client.volumes.create({ name: 'sdk-a', size_mib: 4 });
    assert.deepEqual([a.name, a.size_mib, a.mounted_by], ['sdk-a', 4, []]);
    assert.equal(typeof a.used_bytes, 'number', 'what btrfs accounts (an empty subvolume may hold a few KiB)');
    const b = await client.volumes.create({ name: 'sdk-b', size_mib: 4 });

    const pages: string[][] = [];
    for await (const page of client.volumes.list({ limit: 1 })) pages.push(page.map((v) => v.name));
    assert.deepEqual(pages, [['sdk-b'], ['sdk-a']], 'newest first, one a page');
    assert.equal((await client.volumes.get('sdk-a')).id, a.id);
    assert.equal((await client.volumes.get(a.id)).name, 'sdk-a');

    await assert.rejects(client.volumes.create({ name: 'sdk-a', size_mib: 1 }), (err) => err instanceof ConflictError && err.status === 409 && err.code === 'conflict');
    await assert.rejects(client.volumes.create({ name: '../x', size_mib: 1 }), (err) => err instanceof BadRequestError && err.code === 'bad_request');
    await assert.rejects(client.volumes.create({ name: 'zero', size_mib: 0 }), BadRequestError);
    await assert.rejects(client.volumes.get('nope'), NotFoundError);

    assert.equal((await client.volumes.grow('sdk-a', 16)).size_mib, 16);
    await assert.rejects(client.volumes.grow('sdk-a', 8), BadRequestError, 'volumes never shrink');
    assert.equal((await client.volumes.get(a.id)).size_mib, 16);

    assert.equal(await client.volumes.delete(b.id), true);
    assert.equal(await client.volumes.delete('sdk-b'), false, 'already gone');
    assert.deepEqual(
      (await all(client.volumes.list())).map((v) => v.name),
      ['sdk-a'],
    );
    assert.equal(await client.volumes.delete('sdk-a'), true);
  });

  it('files: upload text, bytes, a Blob and a 2 MiB stream; read whole and streamed; list; remove', async () => {
    await client.volumes.create({ name: 'sdk-files', size_mib: 8 });
    const files = client.volumes.files;
    const entry = await files.write('sdk-files', '/notes/hello.txt', 'héllo\n');
    assert.deepEqual([entry.name, entry.path, entry.type, entry.size], ['hello.txt', '/notes/hello.txt', 'file', 'héllo\n'.length + 1]);
    assert.equal(await files.read('sdk-files', 'notes/hello.txt', { format: 'text' }), 'héllo\n');
    await files.write('sdk-files', 'notes/blob.txt', new Blob(['from a blob']));

    const big = new Uint8Array(randomBytes(2 * MiB));
    assert.equal((await files.write('sdk-files', 'data/big.bin', big)).size, 2 * MiB);
    assert.deepEqual(await files.read('sdk-files', 'data/big.bin'), big);
    assert.equal((await files.write('sdk-files', 'data/streamed.bin', chunked(8, 256 * 1024))).size, 2 * MiB);
    let streamed = 0;
    for await (const chunk of await files.read('sdk-files', 'data/streamed.bin', { format: 'stream' })) streamed += chunk.length;
    assert.equal(streamed, 2 * MiB);

    assert.deepEqual(
      (await files.list('sdk-files')).map((e) => [e.name, e.type]),
      [
        ['data', 'dir'],
        ['notes', 'dir'],
      ],
    );
    assert.deepEqual(
      (await files.list('sdk-files', '/notes')).map((e) => [e.path, e.size]),
      [
        ['/notes/blob.txt', 11],
        ['/notes/hello.txt', 7],
      ],
    );
    await files.remove('sdk-files', 'notes/blob.txt');
    await assert.rejects(files.read('sdk-files', 'notes/blob.txt'), NotFoundError);
    await assert.rejects(files.remove('sdk-files', 'notes'), ConflictError, 'a directory that is not empty');
    await assert.rejects(files.read('sdk-files', '../outside'), BadRequestError);
  });

  it('an upload bigger than the quota is an InsufficientStorageError, with or without a length, and nothing is kept', async () => {
    await client.volumes.create({ name: 'sdk-small', size_mib: 2 });
    const files = client.volumes.files;
    const withLength = await files.write('sdk-small', 'whole.bin', new Uint8Array(4 * MiB)).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.ok(withLength instanceof InsufficientStorageError, String(withLength));
    assert.ok(withLength instanceof ServerError);
    assert.deepEqual([withLength.status, withLength.code], [507, 'insufficient_storage']);
    await assert.rejects(files.write('sdk-small', 'streamed.bin', chunked(16, 256 * 1024)), InsufficientStorageError);
    assert.deepEqual(await files.list('sdk-small'), []);
  });

  it('a sandbox mounting the volume sees a file uploaded through the SDK; delete is refused while it is mounted', async () => {
    const vol = await client.volumes.create({ name: 'sdk-mounted', size_mib: 8 });
    await client.volumes.files.write('sdk-mounted', 'in/greeting.txt', 'from the SDK\n');
    const sb = await Sandbox.create({ client, volumes: [{ volume: 'sdk-mounted', path: '/data' }] });
    sandboxes.push(sb);
    const seen = await sb.commands.run('cat /data/in/greeting.txt');
    assert.deepEqual([seen.exitCode, seen.stdout], [0, 'from the SDK\n']);
    assert.equal((await client.volumes.get(vol.id)).mounted_by.length, 1);
    await assert.rejects(client.volumes.delete('sdk-mounted'), (err) => err instanceof ConflictError && err.status === 409);
    await sb.kill();
    assert.equal(await client.volumes.delete('sdk-mounted'), true);
  });
});
