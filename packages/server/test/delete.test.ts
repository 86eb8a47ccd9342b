import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { Api, ServerProcess } from './helpers/server-process.ts';

const bare = (id: string) => id.replace(/^sb-[a-z0-9]+-/, '');

/** What the engine keeps of a sandbox on the host: its cgroup and its runsc state files. */
async function engineLeft(dataDir: string, id: string): Promise<string[]> {
  const left: string[] = [];
  if (existsSync(`/sys/fs/cgroup/memory/sandpit/${bare(id)}`)) left.push('memory cgroup');
  for (const root of await readdir(join(dataDir, 'gvisor')).catch(() => [] as string[])) {
    if (!root.startsWith('runsc')) continue;
    for (const f of await readdir(join(dataDir, 'gvisor', root)).catch(() => [] as string[])) if (f.includes(bare(id))) left.push(`${root}/${f}`);
  }
  if (existsSync(join(dataDir, 'gvisor', 'sandboxes', bare(id)))) left.push('sandbox dir');
  return left;
}

async function gone(dataDir: string, id: string): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  let left = await engineLeft(dataDir, id);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = await engineLeft(dataDir, id);
  }
  return left;
}

test('delete answers before the engine is torn down: gone from GET and lists at once, its engine after, and never left behind by a crash', async () => {
  const srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor' });
  try {
    let api = new Api(srv.url, srv.key);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const sb = await api.post('/sandboxes', {});
      assert.equal(sb.status, 201, JSON.stringify(sb.body));
      ids.push(sb.body.id);
    }
    assert.equal((await api.post(`/sandboxes/${ids[1]}/pause`)).status, 200);
    for (const id of ids) {
      assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
      assert.equal((await api.get(`/sandboxes/${id}`)).status, 404);
      assert.equal((await api.del(`/sandboxes/${id}`)).status, 404, 'deleting a deleted sandbox answers 404');
      assert.ok(!(await api.get('/sandboxes')).body.sandboxes.some((s: { id: string }) => s.id === id));
    }
    for (const id of ids.slice(0, 2)) assert.deepEqual(await gone(srv.dataDir, id), [], `${id}: its engine is gone after the answer`);

    // A crash right after the answer: the restarted server finishes the teardown.
    const last = await api.post('/sandboxes', {});
    assert.equal((await api.del(`/sandboxes/${last.body.id}`)).status, 204);
    await srv.kill9();
    await srv.launch();
    api = new Api(srv.url, srv.key);
    assert.equal((await api.get(`/sandboxes/${last.body.id}`)).status, 404);
    for (const id of [ids[2]!, last.body.id]) assert.deepEqual(await gone(srv.dataDir, id), [], `${id}: nothing of it is left after the restart`);
  } finally {
    await srv.stop();
  }
});
