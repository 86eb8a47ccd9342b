import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ServerProcess } from '../../server/test/helpers/server-process.ts';
import { ConflictError, SandpitClient } from '../src/index.ts';

describe('SDK: changes between sandboxes, against a real server', () => {
  let server: ServerProcess;
  let client: SandpitClient;

  before(async () => {
    server = await ServerProcess.start();
    client = new SandpitClient({ apiUrl: server.url, apiKey: server.key });
  });
  after(async () => {
    await server?.stop();
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
