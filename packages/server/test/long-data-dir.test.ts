import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Api, ServerProcess } from './helpers/server-process.ts';

// Unix socket paths end at 107 bytes: the agent sockets under the data directory must work from any depth.
for (const driver of ['gvisor', 'container'] as const) {
  test(`${driver}: a 150-character data directory creates, runs, pauses and resumes sandboxes and leaves nothing behind`, async () => {
    const parent = await mkdtemp(join(tmpdir(), 'sandpit-long-'));
    await chmod(parent, 0o755); // crun's sandboxes pass through it (mkdtemp makes it 0700)
    const dataDir = join(parent, 'd'.repeat(150 - parent.length - 1));
    assert.equal(dataDir.length, 150);
    const srv = await ServerProcess.start({ SANDPIT_DRIVER: driver }, { dataDir });
    try {
      const api = new Api(srv.url, srv.key);
      const sb = await api.post('/sandboxes', {});
      assert.equal(sb.status, 201, JSON.stringify(sb.body));
      const ran = await api.post(`/sandboxes/${sb.body.id}/exec`, { command: 'echo hi' });
      assert.equal(ran.body.stdout, 'hi\n', JSON.stringify(ran.body));
      assert.equal((await api.post(`/sandboxes/${sb.body.id}/pause`)).status, 200);
      assert.equal((await api.post(`/sandboxes/${sb.body.id}/resume`)).status, 200);
      assert.equal((await api.post(`/sandboxes/${sb.body.id}/exec`, { command: 'echo again' })).body.stdout, 'again\n');
    } finally {
      await srv.stop();
    }
    const mounts = (await readFile('/proc/mounts', 'utf8')).split('\n').filter((l) => l.includes(dataDir));
    assert.deepEqual(mounts, []);
    await rm(parent, { recursive: true, force: true });
  });
}
