import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { ManualClock } from '../src/clock.ts';
import { NodeService } from '../src/services/fleet/nodes.ts';
import { openDb } from '../src/store/db.ts';
import { type NodeReport, NodeStore } from '../src/store/nodes.ts';
import { SandboxStore } from '../src/store/sandboxes.ts';
import { sandboxRecord } from './helpers/sandbox-record.ts';

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
  for (const id of ['s1', 's2']) await onNode.insert(sandboxRecord(id), 'created');
  await new SandboxStore(db, 'n2').insert(sandboxRecord('s3'), 'created');

  assert.deepEqual((await nodes.load(['n1', 'n2'])).get('n1'), { sandboxes: 2, vcpus: 4, memoryMib: 1024 });
  assert.deepEqual((await onNode.listLive()).map((r) => r.id).sort(), ['s1', 's2'], 'a node works from its own rows');

  assert.deepEqual((await api.failOnNode('n1', 'node_lost', 5)).sort(), ['s1', 's2']);
  assert.deepEqual(await api.failOnNode('n1', 'node_lost', 6), [], 'once');
  const events = await db.selectFrom('sandbox_events').select(['sandbox_id', 'type']).where('type', '=', 'failed').execute();
  assert.equal(events.length, 2, 'each failed sandbox has its event, so metering closes it');
  assert.equal((await nodes.load(['n1'])).get('n1'), undefined, 'failed sandboxes hold no capacity');

  // The silent node comes back with its older view of s1 and writes it: the store keeps its own.
  const stale = sandboxRecord('s1');
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

test('a store that hung instead of failing is a gap between sweeps: silence during it loses no node', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-node-sweep-'));
  const db = await openDb({ dataDir: dir });
  t.after(async () => {
    await db.destroy();
    await rm(dir, { recursive: true, force: true });
  });
  await db.insertInto('teams').values({ id: 'team-1', name: 'one', limits: null, created_at: 1 }).execute();
  const clock = new ManualClock(1_000_000);
  const nodes = new NodeStore(db);
  const service = new NodeService({ store: nodes, sandboxes: new SandboxStore(db), clock, log: pino({ level: 'silent' }), lostMs: 3000 });
  const report: NodeReport = {
    id: 'n1',
    region: 'local',
    url: 'http://127.0.0.1:1',
    vcpus: 2,
    memoryMib: 1024,
    diskMib: 1024,
    maxSandboxes: 10,
    engines: ['gvisor'],
    labels: {},
    templates: [],
    allocated: { sandboxes: 0, vcpus: 0, memoryMib: 0 },
  };
  await new SandboxStore(db, 'n1').insert(sandboxRecord('s1'), 'created');
  const tick = async (ms: number) => {
    clock.advance(ms);
    await service.sweep('local');
  };
  for (let i = 0; i < 5; i++) {
    await service.heartbeat(report);
    await tick(1000);
  }
  // The last heartbeat was recorded; then one sweep's store call hangs for 8 s (no failure is seen).
  await tick(8000);
  assert.equal((await nodes.get('n1'))?.lostAt, null, 'silence while the store hung is not judged');
  await tick(1000);
  await service.heartbeat(report);
  for (let i = 0; i < 2; i++) await tick(1000);
  assert.equal((await nodes.get('n1'))?.lostAt, null, 'a node heartbeating again stays');
  // Real silence, with the store answering every sweep, is still a loss.
  for (let i = 0; i < 2; i++) await tick(1000);
  assert.notEqual((await nodes.get('n1'))?.lostAt, null);
  assert.equal((await new SandboxStore(db).get('s1'))?.failureReason, 'node_lost');
});
