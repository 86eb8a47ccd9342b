import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Api, ServerProcess } from './helpers/server-process.ts';

const COUNTER = 'cd /tmp && (i=0; while true; do i=$((i+1)); echo $i > count.new && mv count.new count; sleep 0.05; done) >/dev/null 2>&1 &';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function exec(api: Api, id: string, command: string): Promise<string> {
  const res = await api.post(`/sandboxes/${id}/exec`, { command });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.stdout.trim();
}

describe('snapshots on the gvisor driver', () => {
  let srv: ServerProcess;
  let api: Api;
  before(async () => {
    srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_MAX_SNAPSHOTS: '4', SANDPIT_MAX_SNAPSHOTS_IN_FLIGHT: '1' });
    api = new Api(srv.url, srv.key);
  });
  after(async () => {
    // Snapshots outlive sandboxes: delete them too, so the engine's files go with the server.
    for (const s of (await api.get('/snapshots?limit=1000')).body.snapshots ?? []) await api.del(`/snapshots/${s.id}`);
    await srv?.stop();
  });

  test('capture, replay, fields, list, rename, fork independence, delete and 410', async () => {
    const sb = (await api.post('/sandboxes', { env: { ORIGIN: 'source' } })).body;
    await exec(api, sb.id, COUNTER);
    await new Promise((r) => setTimeout(r, 400));

    const created = await api.post(`/sandboxes/${sb.id}/snapshot`, { name: 'first', idempotency_key: 'key-1' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const snap = created.body;
    assert.match(snap.id, UUID);
    assert.equal(snap.sandbox_id, sb.id.replace(/^sb-[a-z0-9]+-/, ''), 'bare sandbox uuid');
    assert.equal(snap.template_id, 'platform/base');
    assert.equal(snap.kind, 'mem+fs');
    assert.equal(snap.status, 'ready');
    assert.equal(snap.name, 'first');
    assert.ok(snap.size_bytes > 0, 'size_bytes counts real bytes on disk');
    assert.deepEqual(Object.keys(snap.resources).sort(), ['disk_mib', 'memory_mib', 'vcpu_count']);
    assert.ok(snap.ready_at >= snap.created_at);
    const source = (await api.get(`/sandboxes/${sb.id}`)).body;
    assert.equal(source.latest_snapshot_id, snap.id);
    assert.equal(source.status, 'active', 'answered once the snapshot is on disk; the source is still active while it restores');

    // The source kept running through the capture.
    const c1 = Number(await exec(api, sb.id, 'cat /tmp/count'));
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(Number(await exec(api, sb.id, 'cat /tmp/count')) > c1, 'the source continues after the capture');

    const replay = await api.post(`/sandboxes/${sb.id}/snapshot`, { idempotency_key: 'key-1' });
    assert.equal(replay.status, 200);
    assert.equal(replay.body.id, snap.id);

    assert.equal((await api.get(`/snapshots/${snap.id}`)).body.id, snap.id);
    const listed = (await api.get(`/snapshots?sandbox_id=${sb.id}`)).body;
    assert.deepEqual(
      listed.snapshots.map((s: { id: string }) => s.id),
      [snap.id],
    );
    const renamed = await api.patch(`/snapshots/${snap.id}`, { name: 'renamed' });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'renamed');

    // Two forks continue from the snapshot and diverge independently.
    const forks = [];
    for (let i = 0; i < 2; i++) {
      const f = await api.post('/sandboxes', { from_snapshot: snap.id, name: `fork-${i}` });
      assert.equal(f.status, 201, JSON.stringify(f.body));
      forks.push(f.body.id);
    }
    for (const [i, f] of forks.entries()) {
      const [n, origin] = (await exec(api, f, 'cat /tmp/count; echo $ORIGIN')).split('\n');
      assert.ok(Number(n) > 0, 'the counter is there and running');
      assert.equal(origin, 'source', 'env is inherited');
      await exec(api, f, `echo fork-${i} > /tmp/mine`);
    }
    assert.equal(await exec(api, forks[0], 'cat /tmp/mine'), 'fork-0');
    assert.equal(await exec(api, forks[1], 'cat /tmp/mine'), 'fork-1');
    assert.equal(await exec(api, sb.id, 'cat /tmp/mine 2>/dev/null || echo none'), 'none');
    const before = Number(await exec(api, forks[0], 'cat /tmp/count'));
    // It counts on its own; on a loaded host a tick may take a while.
    let counted = false;
    for (let i = 0; i < 50 && !counted; i++) {
      await new Promise((r) => setTimeout(r, 100));
      counted = Number(await exec(api, forks[0], 'cat /tmp/count')) > before;
    }
    assert.ok(counted, "the fork's counter keeps counting");

    const bad = await api.post('/sandboxes', { from_snapshot: snap.id, env: { A: 'b' } });
    assert.equal(bad.status, 400);
    assert.equal((await api.post('/sandboxes', { from_snapshot: '00000000-0000-4000-8000-000000000000' })).status, 404);

    // Snapshots outlive their sandbox.
    for (const id of [sb.id, ...forks]) assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
    assert.equal((await api.get(`/snapshots/${snap.id}`)).body.status, 'ready');
    assert.equal((await api.post(`/sandboxes/${sb.id}/snapshot`, {})).status, 404, 'snapshot of a deleted sandbox');

    assert.equal((await api.del(`/snapshots/${snap.id}`)).status, 204);
    assert.equal((await api.get(`/snapshots/${snap.id}`)).status, 404);
    assert.equal((await api.del(`/snapshots/${snap.id}`)).status, 404);
  });

  test('410 for a key whose snapshot was deleted; a paused sandbox can be snapshotted', async () => {
    const sb = (await api.post('/sandboxes', {})).body;
    assert.equal((await api.post(`/sandboxes/${sb.id}/pause`)).status, 200);
    const s = await api.post(`/sandboxes/${sb.id}/snapshot`, { idempotency_key: 'k' });
    assert.equal(s.status, 201, JSON.stringify(s.body));
    assert.equal((await api.get(`/sandboxes/${sb.id}`)).body.status, 'paused', 'a paused sandbox stays paused');
    assert.equal((await api.del(`/snapshots/${s.body.id}`)).status, 204);
    const gone = await api.post(`/sandboxes/${sb.id}/snapshot`, { idempotency_key: 'k' });
    assert.equal(gone.status, 410);
    assert.equal(gone.body.error.code, 'gone');
    assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
  });

  test('bad input: 400 for name and key out of range, 404 envelopes', async () => {
    const sb = (await api.post('/sandboxes', {})).body;
    for (const body of [{ name: '' }, { name: 'x'.repeat(65) }, { idempotency_key: '' }, { idempotency_key: 'k'.repeat(256) }, { kind: 'fs' }, { other: 1 }]) {
      const res = await api.post(`/sandboxes/${sb.id}/snapshot`, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.code, 'bad_request');
    }
    const missing = await api.get('/snapshots/00000000-0000-4000-8000-000000000000');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'not_found');
    assert.equal((await api.post('/sandboxes/00000000-0000-4000-8000-000000000000/snapshot', {})).status, 404);
    assert.equal((await api.patch('/snapshots/00000000-0000-4000-8000-000000000000', { name: 'x' })).status, 404);
    assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
  });

  test('429 too_many_snapshots_in_flight and too_many_snapshots, and pagination', async () => {
    const a = (await api.post('/sandboxes', {})).body;
    const b = (await api.post('/sandboxes', {})).body;
    const both = await Promise.all([api.post(`/sandboxes/${a.id}/snapshot`, {}), api.post(`/sandboxes/${b.id}/snapshot`, {})]);
    const codes = both.map((r) => r.status).sort();
    assert.deepEqual(codes, [201, 429], JSON.stringify(both.map((r) => r.body)));
    assert.equal(both.find((r) => r.status === 429)!.body.error.code, 'too_many_snapshots_in_flight');
    const made = [both.find((r) => r.status === 201)!.body.id];
    for (let i = 0; i < 3; i++) {
      const r = await api.post(`/sandboxes/${a.id}/snapshot`, {});
      assert.equal(r.status, 201, JSON.stringify(r.body));
      made.push(r.body.id);
    }
    const over = await api.post(`/sandboxes/${a.id}/snapshot`, {});
    assert.equal(over.status, 429);
    assert.equal(over.body.error.code, 'too_many_snapshots');

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (await api.get(`/snapshots?limit=3${cursor ? `&cursor=${cursor}` : ''}`)).body;
      seen.push(...page.snapshots.map((s: { id: string }) => s.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual([...seen].sort(), [...made].sort());
    for (const id of made) assert.equal((await api.del(`/snapshots/${id}`)).status, 204);
    for (const id of [a.id, b.id]) assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
  });
});

describe('a capture that outlasts the deadline', () => {
  let srv: ServerProcess;
  let api: Api;
  before(async () => {
    srv = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor', SANDPIT_SNAPSHOT_DEADLINE_MS: '1' });
    api = new Api(srv.url, srv.key);
  });
  after(async () => {
    for (const s of (await api.get('/snapshots?limit=1000')).body.snapshots ?? []) await api.del(`/snapshots/${s.id}`);
    await srv?.stop();
  });

  test('answers 202 with Retry-After and settles in the background', async () => {
    const sb = (await api.post('/sandboxes', {})).body;
    const res = await api.post(`/sandboxes/${sb.id}/snapshot`, { idempotency_key: 'slow' });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.status, 'creating');
    assert.equal(res.body.size_bytes, 0);
    assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
    let status = 'creating';
    for (let i = 0; i < 100 && status === 'creating'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await api.get(`/snapshots/${res.body.id}`)).body.status;
    }
    assert.equal(status, 'ready');
    const replay = await api.post(`/sandboxes/${sb.id}/snapshot`, { idempotency_key: 'slow' });
    assert.equal(replay.status, 200);
    assert.equal(replay.body.status, 'ready');
    assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
  });
});

describe('snapshots on the container driver', () => {
  let srv: ServerProcess;
  let api: Api;
  before(async () => {
    srv = await ServerProcess.start({ SANDPIT_DRIVER: 'container' });
    api = new Api(srv.url, srv.key);
  });
  after(async () => {
    await srv?.stop();
  });

  test('503 unavailable: the freezer keeps memory in RAM and cannot capture it', async () => {
    const sb = (await api.post('/sandboxes', {})).body;
    const res = await api.post(`/sandboxes/${sb.id}/snapshot`, {});
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'unavailable');
    assert.equal((await api.post('/sandboxes', { from_snapshot: '00000000-0000-4000-8000-000000000000' })).status, 503);
    assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
  });
});
