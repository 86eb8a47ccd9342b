import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestSubject } from '../src/cluster/request-target.ts';
import { Placement } from '../src/services/fleet/placement.ts';
import type { NodeRecord, NodeState, NodeStore } from '../src/store/nodes.ts';

const NOW = 1_000_000;
const LOST_MS = 10_000;

function node(id: string, opts: { state?: NodeState; lost?: boolean; memoryMib?: number; holds?: string[] } = {}): NodeRecord {
  return {
    id,
    region: 'local',
    url: `http://127.0.0.1:1/${id}`,
    vcpus: 2,
    memoryMib: 4096,
    diskMib: 1024,
    maxSandboxes: 0,
    engines: ['container'],
    labels: {},
    templates: opts.holds ?? [],
    allocated: { sandboxes: 0, vcpus: 0, memoryMib: opts.memoryMib ?? 0 },
    state: opts.state ?? 'ready',
    registeredAt: 0,
    heartbeatAt: opts.lost ? NOW - LOST_MS - 1 : NOW,
    lostAt: null,
    movedOutAt: null,
  };
}

// Placement reads only the region's node rows: a list stands in for the store in this unit test.
const placement = (nodes: NodeRecord[]) => new Placement({ store: { list: async () => nodes } as unknown as NodeStore, clock: { now: () => NOW }, lostMs: LOST_MS });
const need = { region: 'local', vcpus: 1, memoryMib: 512 };

test('a volume request is about that volume; the list and the create are about none', () => {
  assert.deepEqual(requestSubject('GET', '/volumes/data', {}), { kind: 'volume', ref: 'data' });
  assert.deepEqual(requestSubject('PATCH', '/volumes/data?x=1', {}), { kind: 'volume', ref: 'data' });
  assert.deepEqual(requestSubject('PUT', '/volumes/my%20vol/files?path=/a', {}), { kind: 'volume', ref: 'my vol' });
  assert.deepEqual(requestSubject('GET', '/volumes/data/files/list?path=/', {}), { kind: 'volume', ref: 'data' });
  assert.equal(requestSubject('GET', '/volumes', {}), undefined);
  assert.equal(requestSubject('POST', '/volumes', {}), undefined);
  assert.equal(requestSubject('GET', '/volumes/data/other', {}), undefined);
  assert.equal(requestSubject('GET', '/volumes/%E0%A4%A/files', {}), undefined);
});

test('a create bound to a node goes there even when another is less loaded, and 503 names that node when it cannot', async () => {
  const nodes = [node('a'), node('b', { memoryMib: 3000 })];
  assert.equal((await placement(nodes).choose(need)).node.id, 'a');
  assert.equal((await placement(nodes).choose({ ...need, node: 'b' })).node.id, 'b');

  const lost = placement([node('a'), node('b', { lost: true })]);
  await assert.rejects(lost.choose({ ...need, node: 'b' }), (e: any) => e.status === 503 && /'b'.*is lost/.test(e.message));
  const cordoned = placement([node('a'), node('b', { state: 'cordoned' })]);
  await assert.rejects(cordoned.choose({ ...need, node: 'b' }), (e: any) => e.status === 503 && /'b'.*takes no sandboxes/.test(e.message));
  const full = placement([node('a'), node('b', { memoryMib: 4000 })]);
  await assert.rejects(full.choose({ ...need, node: 'b' }), (e: any) => e.status === 503 && /'b'.*is full/.test(e.message));
});

test("a fork goes to its snapshot's holder while it has room, else to a node holding a copy of the snapshot, even a busier one", async () => {
  const fork = { ...need, holder: 'a', templateKey: 'snapshot:s1' };
  const nodes = (holder: Parameters<typeof node>[1]) => [node('a', holder), node('b', { memoryMib: 1000, holds: ['snapshot:s1'] }), node('c')];
  assert.equal((await placement(nodes({ memoryMib: 2000 })).choose(fork)).node.id, 'a');
  assert.equal((await placement(nodes({ state: 'cordoned' })).choose(fork)).node.id, 'b');
  assert.equal((await placement(nodes({ state: 'cordoned' })).choose({ ...fork, templateKey: 'snapshot:other' })).node.id, 'c');
});
