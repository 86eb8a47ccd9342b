import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { API_AUDIENCE, signInternalToken } from '../src/internal-token.ts';
import { until } from './helpers/cluster-steps.ts';
import { createDatabase, PostgresCluster } from './helpers/postgres.ts';
import { Api, ServerProcess } from './helpers/server-process.ts';

/**
 * Volumes on several hosts: PostgreSQL, one API replica and two nodes (crun). A volume lives on the
 * node that created it; the replica sends its requests and the sandboxes that mount it there; while
 * that node is lost they answer 503, and when it is back the volume and its files are as they were.
 */
const key = randomBytes(32);
// Short enough for the test to see a loss, long enough that a loaded 2-core host keeps live nodes live.
const NODE_LOST_MS = 8000;
const env = (extra: Record<string, string>) => ({ SANDPIT_CLUSTER_KEY: key.toString('hex'), SANDPIT_DRIVER: 'container', SANDPIT_NODE_LOST_MS: String(NODE_LOST_MS), ...extra });
const internal = { authorization: `Bearer ${signInternalToken(key, API_AUDIENCE, 10 * 60_000)}` };

let pg: PostgresCluster;
let db: { url: string; drop: () => Promise<void> };
let replica: ServerProcess;
const nodes: ServerProcess[] = [];
let api: Api;

async function internalNodes(): Promise<any[]> {
  const res = await fetch(`${replica.url}/internal/nodes`, { headers: internal });
  assert.equal(res.status, 200);
  return ((await res.json()) as { nodes: any[] }).nodes;
}

async function nodeState(id: string, state: string): Promise<void> {
  await until(`node ${id} ${state}`, async () => (await internalNodes()).find((n) => n.id === id && n.state === state), 30_000);
}

/** The node whose data directory holds the volume's disk. */
async function homeOf(volumeId: string): Promise<ServerProcess> {
  const found: ServerProcess[] = [];
  for (const n of nodes)
    if (
      await stat(join(n.dataDir, 'volumes', volumeId)).then(
        (s) => s.isDirectory(),
        () => false,
      )
    )
      found.push(n);
  assert.equal(found.length, 1, `volume ${volumeId} is on ${found.length} nodes`);
  return found[0]!;
}

const upload = (path: string, volume: string, body: string) =>
  fetch(`${api.base}/volumes/${volume}/files?path=${encodeURIComponent(path)}`, { method: 'PUT', headers: { 'x-api-key': api.key!, 'content-type': 'application/octet-stream' }, body });

function assertUnavailable(res: { status: number; body: any }, what: string): void {
  assert.equal(res.status, 503, `${what}: ${JSON.stringify(res.body)}`);
  assert.equal(res.body.error.code, 'unavailable', what);
  assert.match(res.body.error.message, /is lost/, what);
}

before(async () => {
  pg = await PostgresCluster.start();
  db = await createDatabase(pg.adminUrl);
  replica = await ServerProcess.start(env({ SANDPIT_DATABASE_URL: db.url, SANDPIT_ROLE: 'api' }));
  nodes.push(
    ...(await ServerProcess.startAll(
      [1, 2].map((i) =>
        env({ SANDPIT_DATABASE_URL: db.url, SANDPIT_ROLE: 'node', SANDPIT_NODE_ID: `v${i}`, SANDPIT_API_URL: replica.url, SANDPIT_NET_POOL: `100.${110 + i}.0.0/16`, SANDPIT_PUBLIC_URL: replica.url }),
      ),
    )),
  );
  api = new Api(replica.url, replica.key);
  await until('two ready nodes', async () => (await internalNodes()).filter((n) => n.state === 'ready').length === 2);
});

after(async () => {
  // The replica first would leave the nodes' sandboxes to their stop; deletes go through it while it runs.
  if (api) {
    for (const sb of (await api.get('/sandboxes?limit=1000').catch(() => undefined))?.body.sandboxes ?? []) await api.del(`/sandboxes/${sb.id}`).catch(() => undefined);
    for (const v of (await api.get('/volumes?limit=1000').catch(() => undefined))?.body.volumes ?? []) await api.del(`/volumes/${v.id}`).catch(() => undefined);
  }
  await replica?.stop().catch(() => undefined);
  for (const n of nodes) await n.stop().catch(() => undefined);
  await db?.drop().catch(() => undefined);
  await pg?.stop();
});

test('a volume lives on one node: its files, its sandboxes and its loss go through the replica', async () => {
  const made = await api.post('/volumes', { name: 'shared', size_mib: 64 });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const vol = made.body;
  const home = await homeOf(vol.id);
  const homeId = `v${nodes.indexOf(home) + 1}`;
  const otherId = homeId === 'v1' ? 'v2' : 'v1';

  // Files through the replica, by id and by name.
  assert.equal((await upload('/greeting.txt', vol.id, 'hello from the volume\n')).status, 201);
  const down = await fetch(`${api.base}/volumes/shared/files?path=/greeting.txt`, { headers: { 'x-api-key': api.key! } });
  assert.equal(down.status, 200);
  assert.equal(await down.text(), 'hello from the volume\n');
  assert.deepEqual(
    (await api.get('/volumes/shared/files/list?path=/')).body.entries.map((e: any) => e.name),
    ['greeting.txt'],
  );
  assert.equal((await api.patch('/volumes/shared', { size_mib: 96 })).body.size_mib, 96);
  // btrfs counts a qgroup's bytes at its transaction commit, up to 30 s after the write (docs/volumes.md).
  const listed = await until(
    'the list counting the file',
    async () => {
      const l = await api.get('/volumes');
      return l.body.volumes[0]?.used_bytes > 0 && l.body.volumes;
    },
    60_000,
  );
  assert.deepEqual(
    listed.map((v: any) => v.name),
    ['shared'],
  );
  assert.equal((await api.get('/volumes/nope')).status, 404);

  // Two sandboxes mounting it land on its node and read the file.
  const sandboxes: string[] = [];
  for (const ref of [vol.id, 'shared']) {
    const sb = await api.post('/sandboxes', { volumes: [{ volume: ref, path: '/data' }] });
    assert.equal(sb.status, 201, JSON.stringify(sb.body));
    sandboxes.push(sb.body.id);
    const cat = await api.post(`/sandboxes/${sb.body.id}/exec`, { command: 'cat /data/greeting.txt' });
    assert.equal(cat.body.stdout, 'hello from the volume\n', JSON.stringify(cat.body));
  }
  await api.post(`/sandboxes/${sandboxes[0]}/exec`, { command: 'echo written-inside > /data/inside.txt' });
  assert.equal(await (await fetch(`${api.base}/volumes/${vol.id}/files?path=/inside.txt`, { headers: { 'x-api-key': api.key! } })).text(), 'written-inside\n');
  const load = await until('the nodes reporting the sandboxes', async () => {
    const all = await internalNodes();
    return all.reduce((sum, n) => sum + n.sandboxes, 0) === 2 && all;
  });
  assert.equal(load.find((n) => n.id === homeId).sandboxes, 2);
  assert.equal(load.find((n) => n.id === otherId).sandboxes, 0);
  // mounted_by names sandboxes by their bare UUID.
  assert.deepEqual((await api.get(`/volumes/${vol.id}`)).body.mounted_by.sort(), sandboxes.map((id) => id.replace(/^sb-local-/, '')).sort());

  // A volume on the other node (its home cordoned, so placement must choose the other one).
  const cordon = (action: string) => fetch(`${replica.url}/internal/nodes/${homeId}/${action}`, { method: 'POST', headers: internal });
  assert.equal((await cordon('cordon')).status, 204);
  let elsewhere: any;
  try {
    await nodeState(homeId, 'cordoned');
    // Replicas read node states at most every 250 ms (docs/cluster.md).
    await new Promise((r) => setTimeout(r, 300));
    elsewhere = await api.post('/volumes', { name: 'elsewhere', size_mib: 16 });
    assert.equal(elsewhere.status, 201, JSON.stringify(elsewhere.body));
  } finally {
    assert.equal((await cordon('uncordon')).status, 204);
  }
  await nodeState(homeId, 'ready');
  assert.notEqual(await homeOf(elsewhere.body.id), home);
  const split = await api.post('/sandboxes', {
    volumes: [
      { volume: 'shared', path: '/a' },
      { volume: 'elsewhere', path: '/b' },
    ],
  });
  assert.equal(split.status, 409, JSON.stringify(split.body));
  assert.equal(split.body.error.code, 'conflict');
  assert.match(split.body.error.message, /different nodes/);

  // Its node killed: the volume's routes and creates mounting it answer 503; nothing is deleted.
  await home.kill9();
  await nodeState(homeId, 'lost');
  // The replica reads node states at most every second (its directory).
  assertUnavailable(
    await until('the replica seeing the loss', async () => {
      const r = await api.get(`/volumes/${vol.id}`);
      return r.status !== 200 && r;
    }),
    'get by id',
  );
  assertUnavailable(await api.get('/volumes/shared'), 'get by name');
  assertUnavailable(await api.get('/volumes/shared/files/list?path=/'), 'list files');
  const lostDown = await fetch(`${api.base}/volumes/shared/files?path=/greeting.txt`, { headers: { 'x-api-key': api.key! } });
  assert.equal(lostDown.status, 503);
  assert.equal((await upload('/later.txt', 'shared', 'x')).status, 503);
  assertUnavailable(await api.patch('/volumes/shared', { size_mib: 128 }), 'patch');
  assertUnavailable(await api.del('/volumes/shared'), 'delete');
  assertUnavailable(await api.post('/sandboxes', { volumes: [{ volume: 'shared', path: '/data' }] }), 'create mounting it');
  // The volume of the node that is up still works, and the list still shows both.
  assert.equal((await upload('/ok.txt', 'elsewhere', 'ok')).status, 201);
  assert.deepEqual(((await api.get('/volumes')).body.volumes as any[]).map((v) => v.name).sort(), ['elsewhere', 'shared']);

  // Back: the volume and its files are as they were, and sandboxes mount it again.
  await home.launch();
  await nodeState(homeId, 'ready');
  const again = await until('the volume served again', async () => {
    const r = await fetch(`${api.base}/volumes/shared/files?path=/inside.txt`, { headers: { 'x-api-key': api.key! } });
    return r.status === 200 && r;
  });
  assert.equal(await again.text(), 'written-inside\n');
  const third = await api.post('/sandboxes', { volumes: [{ volume: 'shared', path: '/data', read_only: true }] });
  assert.equal(third.status, 201, JSON.stringify(third.body));
  assert.equal((await api.post(`/sandboxes/${third.body.id}/exec`, { command: 'cat /data/greeting.txt' })).body.stdout, 'hello from the volume\n');

  // Everything deleted through the replica: the sandboxes (those the loss failed too), then the volumes.
  assert.equal((await api.del('/volumes/shared')).status, 409, 'still mounted');
  for (const id of [...sandboxes, third.body.id]) assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
  assert.equal((await api.del('/volumes/shared')).status, 204);
  assert.equal((await api.del(`/volumes/${elsewhere.body.id}`)).status, 204);
  assert.deepEqual((await api.get('/volumes')).body.volumes, []);
  for (const [n, id] of [
    [home, vol.id],
    [nodes.find((x) => x !== home)!, elsewhere.body.id],
  ] as const) {
    assert.equal(
      await stat(join(n.dataDir, 'volumes', id)).then(
        () => true,
        () => false,
      ),
      false,
      `volume ${id} left on its node`,
    );
  }
});
