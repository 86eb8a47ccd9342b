import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { createDatabase, PostgresCluster } from './helpers/postgres.ts';
import { Api, parseSse, ServerProcess } from './helpers/server-process.ts';
import { terminalEcho, until } from './helpers/cluster-steps.ts';

/**
 * Two regions on one machine, one store: each its own API replica and two nodes. Region a serves
 * every request for a sandbox living in b (control plane, exec stream, files, terminal, preview),
 * lists both, bills once; b down leaves a working and answers b's sandboxes 503; b back, they work.
 */
const key = randomBytes(32).toString('hex');
const LOST_MS = 3000;
const env = (extra: Record<string, string>) => ({ SANDPIT_CLUSTER_KEY: key, SANDPIT_DRIVER: 'gvisor', SANDPIT_NODE_LOST_MS: String(LOST_MS), ...extra });

let pg: PostgresCluster;
let db: { url: string; drop: () => Promise<void> };
const apis: Record<string, ServerProcess> = {};
const nodes: ServerProcess[] = [];
let a: Api;
let b: Api;

before(async () => {
  pg = await PostgresCluster.start();
  db = await createDatabase(pg.adminUrl);
  for (const region of ['a', 'b']) apis[region] = await ServerProcess.start(env({ SANDPIT_DATABASE_URL: db.url, SANDPIT_ROLE: 'api', SANDPIT_REGION: region }));
  const nodeEnvs: Record<string, string>[] = [];
  for (const [r, region] of ['a', 'b'].entries()) {
    for (const i of [1, 2]) {
      nodeEnvs.push(
        env({
          SANDPIT_DATABASE_URL: db.url,
          SANDPIT_ROLE: 'node',
          SANDPIT_REGION: region,
          SANDPIT_NODE_ID: `${region}${i}`,
          SANDPIT_API_URL: apis[region]!.url,
          SANDPIT_NET_POOL: `100.${110 + r * 2 + i}.0.0/16`,
          SANDPIT_PUBLIC_URL: apis[region]!.url,
        }),
      );
    }
  }
  nodes.push(...(await ServerProcess.startAll(nodeEnvs)));
  a = new Api(apis.a!.url, apis.a!.key);
  b = new Api(apis.b!.url, apis.a!.key);
});

after(async () => {
  // Replicas first: their deletes reach the live nodes, which destroy the sandboxes.
  for (const s of Object.values(apis)) await s.stop().catch(() => undefined);
  for (const n of nodes) await n.stop().catch(() => undefined);
  await db?.drop().catch(() => undefined);
  await pg?.stop();
});

async function createIn(api: Api, region: string, body: Record<string, unknown> = {}) {
  // Nodes register within a second of starting; until then a region has none to place on.
  return until(`a sandbox in ${region}`, async () => {
    const res = await api.post('/sandboxes', { region, ...body });
    if (res.status === 503) return false;
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  });
}

/** A request to the API listener under another host name (per-sandbox and preview hosts). */
function hostRequest(base: string, host: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers: { ...headers, host: `${host}:${u.port}` } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const preview = (base: string, id: string, port: number) => hostRequest(base, `${port}-${id}.preview.localhost`, 'GET', '/');

test('region a serves every request for a sandbox that lives in region b', async () => {
  const info = await a.get('/info');
  assert.deepEqual(
    info.body.regions.map((r: { name: string }) => r.name),
    ['a', 'b'],
  );
  assert.equal(info.body.regions[1].api_url, apis.b!.url.replace('127.0.0.1', 'localhost'));

  const sb = await createIn(a, 'b');
  assert.match(sb.id, /^sb-b-/);
  assert.equal(sb.region, 'b');
  const bare = sb.id.slice('sb-b-'.length);
  assert.equal((await a.get(`/sandboxes/${bare}`)).body.id, sb.id, 'a bare UUID is found in its region');

  const exec = await a.post(`/sandboxes/${sb.id}/exec`, { command: 'echo from-b' });
  assert.equal(exec.status, 200, JSON.stringify(exec.body));
  assert.equal(exec.body.stdout, 'from-b\n');
  const stream = await a.req('POST', `/sandboxes/${sb.id}/exec/stream`, { command: 'echo one; sleep 0.2; echo two' });
  assert.equal(stream.status, 200);
  const events = parseSse(stream.body).events;
  assert.equal(events.map((e) => e.stdout ?? '').join(''), 'one\ntwo\n');
  assert.equal(events.filter((e) => e.finished).length, 1);

  const dp = { 'x-platform-sandbox-id': sb.id, 'x-access-token': sb.access_token };
  // The data plane by per-sandbox host name, through the other region.
  const byHost = await hostRequest(
    a.base,
    `${sb.id}.sandbox.localhost`,
    'POST',
    '/exec',
    { 'x-access-token': sb.access_token, 'content-type': 'application/json' },
    JSON.stringify({ command: 'echo by-host' }),
  );
  assert.equal(byHost.status, 200, byHost.body);
  assert.equal(JSON.parse(byHost.body).stdout, 'by-host\n');
  const blob = randomBytes(2 * 1024 * 1024);
  assert.equal((await fetch(`${a.base}/files?path=/tmp/b.bin`, { method: 'PUT', headers: dp, body: blob })).status, 200);
  assert.ok(Buffer.from(await (await fetch(`${a.base}/files?path=/tmp/b.bin`, { headers: dp })).arrayBuffer()).equals(blob));

  await terminalEcho(a, dp, 'across-regions');

  await a.post(`/sandboxes/${sb.id}/exec`, { command: `setsid python3 -m http.server 8080 >/dev/null 2>&1 < /dev/null & sleep 1` });
  assert.equal((await a.post(`/sandboxes/${sb.id}/preview-ports`, { port: 8080 })).status, 201);
  const page = await until('preview through region a', async () => {
    const r = await preview(a.base, sb.id, 8080);
    return r.status === 200 && r;
  });
  assert.match(page.body, /Directory listing/);

  const own = await createIn(a, 'a');
  const list = (await b.get('/sandboxes?limit=100')).body.sandboxes.map((s: { id: string }) => s.id);
  assert.ok(list.includes(sb.id) && list.includes(own.id), 'every region lists the sandboxes of every region');
  const [billA, billB] = await Promise.all([a.get('/billing/summary'), b.get('/billing/summary')]);
  assert.equal(billA.status, 200);
  assert.deepEqual(billA.body.billing_period, billB.body.billing_period);
  assert.ok(Math.abs(billA.body.current_charges_usd - billB.body.current_charges_usd) < 0.01, 'the same charges whichever region answers');

  assert.equal((await a.post('/sandboxes', { region: 'nowhere' })).status, 400);
  assert.equal((await a.get(`/sandboxes/sb-zz-${randomUUID()}`)).status, 404);
  const looped = await a.req('GET', `/sandboxes/${sb.id}`, undefined, { 'x-sandpit-via-region': 'b' });
  assert.equal(looped.status, 503, 'a request forwarded once is never forwarded again');

  // A fresh sandbox of b: the preview's kept-alive TCP connection would stop a gVisor checkpoint.
  const quiet = await createIn(a, 'b');
  await a.post(`/sandboxes/${quiet.id}/exec`, { command: 'echo 7 > /tmp/n' });
  const snap = await a.post(`/sandboxes/${quiet.id}/snapshot`, {});
  assert.ok(snap.status === 201 || snap.status === 202, JSON.stringify(snap.body));
  await until('snapshot ready', async () => (await a.get(`/snapshots/${snap.body.id}`)).body.status === 'ready');
  const wrong = await a.post('/sandboxes', { region: 'a', from_snapshot: snap.body.id });
  assert.equal(wrong.status, 400);
  assert.match(wrong.body.error.message, /lives in region 'b'/);
  const fork = await a.post('/sandboxes', { from_snapshot: snap.body.id });
  assert.equal(fork.status, 201, JSON.stringify(fork.body));
  assert.equal(fork.body.region, 'b');
  assert.equal((await a.post(`/sandboxes/${fork.body.id}/exec`, { command: 'cat /tmp/n' })).body.stdout, '7\n');
  assert.equal((await a.del(`/snapshots/${snap.body.id}`)).status, 204);
});

test('a region that is down does not break the other, and its sandboxes work again when it is back', async () => {
  const inB = await createIn(a, 'b');
  const inA = await createIn(b, 'a');
  await apis.b!.kill9();
  await new Promise((r) => setTimeout(r, LOST_MS + 500));
  assert.equal((await a.post(`/sandboxes/${inA.id}/exec`, { command: 'echo still' })).body.stdout, 'still\n');
  const down = await a.post(`/sandboxes/${inB.id}/exec`, { command: 'true' });
  assert.equal(down.status, 503, JSON.stringify(down.body));
  assert.equal(down.body.error.code, 'unavailable');
  assert.equal((await a.post('/sandboxes', { region: 'b' })).status, 503);
  const list = await a.get('/sandboxes?limit=100');
  assert.equal(list.status, 200);
  assert.ok(list.body.sandboxes.some((s: { id: string }) => s.id === inB.id));

  await apis.b!.launch();
  const back = await until('region b back', async () => {
    const r = await a.post(`/sandboxes/${inB.id}/exec`, { command: 'echo back' });
    return r.status === 200 && r;
  });
  assert.equal(back.body.stdout, 'back\n');
});
