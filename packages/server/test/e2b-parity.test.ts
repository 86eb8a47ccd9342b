import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Sandbox } from 'e2b';
import { Api, freePort, ServerProcess } from './helpers/server-process.ts';

/**
 * What E2B's own SDK tests found missing (issue 23), driven through the unmodified `e2b` SDK:
 * list filters, kill of a malformed id, directory size, metrics, and (gVisor) snapshots and fork.
 */
async function e2bServer(driver: 'container' | 'gvisor'): Promise<{ server: ServerProcess; opts: { apiUrl: string; sandboxUrl: string; apiKey: string } }> {
  const port = await freePort();
  const server = await ServerProcess.start({ SANDPIT_DRIVER: driver, SANDPIT_E2B_PORT: String(port), SANDPIT_METRICS_INTERVAL_MS: '200' });
  const url = `http://127.0.0.1:${port}`;
  return { server, opts: { apiUrl: url, sandboxUrl: url, apiKey: server.key } };
}

describe('container driver', () => {
  let server: ServerProcess;
  let opts: { apiUrl: string; sandboxUrl: string; apiKey: string };
  before(async () => ({ server, opts } = await e2bServer('container')));
  after(async () => {
    await server?.stop();
  });

  test('list: order, template and startedAfter filter and sort', async () => {
    const tag = { t: `parity-${Date.now()}` };
    const a = await Sandbox.create({ ...opts, metadata: tag });
    const b = await Sandbox.create({ ...opts, metadata: tag });
    try {
      const ids = async (o: Parameters<typeof Sandbox.list>[0]) => (await Sandbox.list({ ...opts, ...o }).nextItems()).map((s) => s.sandboxId);
      assert.deepEqual(await ids({ query: { metadata: tag }, order: 'asc' }), [a.sandboxId, b.sandboxId]);
      assert.deepEqual(await ids({ query: { metadata: tag }, order: 'desc' }), [b.sandboxId, a.sandboxId]);
      assert.equal((await ids({ query: { metadata: tag, template: 'base' } })).length, 2);
      assert.deepEqual(await ids({ query: { metadata: tag, template: 'no-such-template' } }), []);
      const info = await b.getInfo();
      assert.ok((await ids({ query: { metadata: tag, startedAfter: info.startedAt } })).includes(b.sandboxId));
      assert.deepEqual(await ids({ query: { metadata: tag, startedAfter: new Date(info.startedAt.getTime() + 1000) } }), []);
    } finally {
      await a.kill();
      await b.kill();
    }
  });

  test('kill of an id that is not a sandbox id answers false, not an error', async () => {
    assert.equal(await Sandbox.kill('nonexistingsandbox', opts), false);
  });

  test('a directory has a size above 0; metrics come as E2B sandbox metrics', async () => {
    const s = await Sandbox.create({ ...opts, timeoutMs: 60_000 });
    try {
      await s.files.makeDir('/home/user/sized');
      assert.ok((await s.files.getInfo('/home/user/sized')).size > 0);
      let metrics = await s.getMetrics();
      for (let i = 0; i < 50 && metrics.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 200));
        metrics = await s.getMetrics();
      }
      assert.ok(metrics.length > 0);
      assert.equal(metrics[0]!.cpuCount, (await s.getInfo()).cpuCount);
      assert.ok(metrics[0]!.memTotal > 0 && metrics[0]!.diskTotal > 0);
      assert.deepEqual(await s.getMetrics({ start: new Date(Date.now() + 3_600_000) }), []);
    } finally {
      await s.kill();
    }
  });

  test('signed file URLs: download and upload, expired and forged signatures refused', async () => {
    const s = await Sandbox.create({ ...opts, secure: true, timeoutMs: 60_000 });
    try {
      await s.files.write('signed.txt', 'hello signed');
      const down = await fetch(await s.downloadUrl('signed.txt', { useSignatureExpiration: 10_000 }));
      assert.equal(down.status, 200);
      assert.equal(await down.text(), 'hello signed');
      const expired = await fetch(await s.downloadUrl('signed.txt', { useSignatureExpiration: -10_000 }));
      assert.equal(expired.status, 401);
      assert.deepEqual(await expired.json(), { code: 401, message: 'signature is already expired' });
      const forged = new URL(await s.downloadUrl('signed.txt'));
      forged.searchParams.set('path', 'other.txt');
      assert.equal((await fetch(forged)).status, 401);
      const form = new FormData();
      form.append('file', 'uploaded by url');
      const up = await fetch(await s.uploadUrl('up.txt', { user: 'root', useSignatureExpiration: 10_000 }), { method: 'POST', body: form });
      assert.equal(up.status, 200);
      assert.deepEqual(await up.json(), [{ name: 'up.txt', path: '/root/up.txt', type: 'file' }]);
      assert.equal(await s.files.read('/root/up.txt', { user: 'root' }), 'uploaded by url');
    } finally {
      await s.kill();
    }
  });
});

describe('gVisor: snapshots and fork through E2B routes', () => {
  let server: ServerProcess;
  let opts: { apiUrl: string; sandboxUrl: string; apiKey: string };
  before(async () => ({ server, opts } = await e2bServer('gvisor')));
  after(async () => {
    await server?.stop();
  });

  /** The audit entries of `actions` (newest first), once as many as expected are written (they follow the answers). */
  async function audited(actions: string[], want: number): Promise<[string, string, number][]> {
    const api = new Api(server.url, server.key);
    let got: [string, string, number][] = [];
    for (let i = 0; i < 50 && got.length < want; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      const entries = (await api.get('/audit-log?limit=200')).body.entries as { action: string; resource: { type: string }; request: { route: string }; status: number }[];
      got = entries.filter((e) => actions.includes(e.action)).map((e) => [e.action, e.request.route, e.status]);
    }
    return got;
  }

  test('createSnapshot, list by sandbox and name, start from it, delete', async () => {
    const s = await Sandbox.create({ ...opts, timeoutMs: 120_000 });
    try {
      await s.files.write('/home/user/kept.txt', 'from the snapshot');
      const snap = await s.createSnapshot({ name: 'parity-snap' });
      assert.ok(snap.names.includes('parity-snap'));
      const listed = async (o: object) => (await Sandbox.listSnapshots({ ...opts, ...o }).nextItems()).map((x) => x.snapshotId);
      assert.ok((await listed({ sandboxId: s.sandboxId })).includes(snap.snapshotId));
      assert.ok((await listed({ name: 'parity-snap' })).includes(snap.snapshotId));
      assert.deepEqual(await listed({ name: 'parity-snap-none' }), []);
      const started = await Sandbox.create(snap.snapshotId, { ...opts, timeoutMs: 60_000 });
      try {
        assert.equal(await started.files.read('/home/user/kept.txt'), 'from the snapshot');
      } finally {
        await started.kill();
      }
      assert.equal(await Sandbox.deleteSnapshot(snap.snapshotId, opts), true);
      assert.equal(await Sandbox.deleteSnapshot(snap.snapshotId, opts), false);
      // Recorded as on the main API (they were not before: these routes set no principal for the audit).
      // The second delete found no snapshot, so it was a template delete (of no template: 404).
      assert.deepEqual(await audited(['snapshot.create', 'snapshot.delete', 'template.delete'], 3), [
        ['template.delete', 'e2b /templates/:templateID', 404],
        ['snapshot.delete', 'e2b /templates/:templateID', 204],
        ['snapshot.create', 'e2b /sandboxes/:sandboxID/snapshots', 201],
      ]);
    } finally {
      await s.kill();
    }
  });

  test('fork: two independent copies, the original keeps running', async () => {
    const s = await Sandbox.create({ ...opts, timeoutMs: 120_000 });
    try {
      await s.files.write('/home/user/state.txt', 'before fork');
      const forks = await s.fork({ count: 2, timeoutMs: 60_000 });
      const sandboxes = forks.filter((f): f is Sandbox => f instanceof Sandbox);
      try {
        assert.equal(sandboxes.length, 2);
        assert.ok(await s.isRunning());
        await sandboxes[0]!.files.write('/home/user/state.txt', 'changed in fork');
        assert.equal(await sandboxes[1]!.files.read('/home/user/state.txt'), 'before fork');
        assert.equal(await s.files.read('/home/user/state.txt'), 'before fork');
      } finally {
        await Promise.all(sandboxes.map((f) => f.kill()));
      }
      assert.equal((await Sandbox.listSnapshots({ ...opts, sandboxId: s.sandboxId }).nextItems()).length, 0);
      assert.deepEqual(await audited(['sandbox.fork'], 1), [['sandbox.fork', 'e2b /sandboxes/:sandboxID/fork', 200]]);
    } finally {
      await s.kill();
    }
  });
});
