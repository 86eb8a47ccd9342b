import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openDb } from '../src/store/db.ts';
import { NodeStore } from '../src/store/nodes.ts';
import { type SandboxRecord, SandboxStore } from '../src/store/sandboxes.ts';

const record = (id: string): SandboxRecord => ({
  id,
  teamId: 'team-1',
  name: null,
  templateId: 'platform/base',
  driver: 'gvisor',
  region: 'local',
  status: 'active',
  metadata: {},
  env: {},
  network: null,
  secrets: {},
  previewAccess: 'private',
  resources: { vcpu_count: 2, memory_mib: 512, disk_mib: 1024 },
  accessToken: 'token',
  autoPauseSeconds: null,
  autoDeleteSeconds: null,
  autoPauseAt: null,
  autoDeleteAt: null,
  activeSince: 1,
  pausedAt: null,
  latestSnapshotId: null,
  createdAt: 1,
  updatedAt: 1,
  deletedAt: null,
});

test('the store view wins over a node that was only silent: failed for node loss stays failed, deleted stays deleted', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-node-store-'));
  const db = await openDb({ dataDir: dir });
  t.after(async () => {
    await db.destroy();
    await rm(dir, { recursive: true, force: true });
  });
  await db.insertInto('teams').values({ id: 'team-1', name: 'one', limits: null, created_at: 1 }).execute();
  const onNode = new SandboxStore(db, 'n1');
  const api = new SandboxStore(db);
  const nodes = new NodeStore(db);
  for (const id of ['s1', 's2']) await onNode.insert(record(id), 'created');
  await new SandboxStore(db, 'n2').insert(record('s3'), 'created');

  assert.deepEqual((await nodes.load(['n1', 'n2'])).get('n1'), { sandboxes: 2, vcpus: 4, memoryMib: 1024 });
  assert.deepEqual((await onNode.listLive()).map((r) => r.id).sort(), ['s1', 's2'], 'a node works from its own rows');

  assert.deepEqual((await api.failOnNode('n1', 'node_lost', 5)).sort(), ['s1', 's2']);
  assert.deepEqual(await api.failOnNode('n1', 'node_lost', 6), [], 'once');
  const events = await db.selectFrom('sandbox_events').select(['sandbox_id', 'type']).where('type', '=', 'failed').execute();
  assert.equal(events.length, 2, 'each failed sandbox has its event, so metering closes it');
  assert.equal((await nodes.load(['n1'])).get('n1'), undefined, 'failed sandboxes hold no capacity');

  // The silent node comes back with its older view of s1 and writes it: the store keeps its own.
  const stale = record('s1');
  stale.status = 'paused';
  await onNode.save(stale, { type: 'paused', at: 7 });
  const s1 = await api.get('s1');
  assert.equal(s1?.status, 'failed');
  assert.equal(s1?.failureReason, 'node_lost');
  assert.equal((await db.selectFrom('sandbox_events').select('type').where('sandbox_id', '=', 's1').where('type', '=', 'paused').execute()).length, 0);

  // Deleting it works, and a later write does not bring it back.
  s1!.deletedAt = 8;
  await api.save(s1!, { type: 'deleted', at: 8 });
  await onNode.save(stale);
  assert.equal(await api.get('s1'), undefined);
});
