import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { API_AUDIENCE, signInternalToken } from '../src/internal-token.ts';
import { until } from './helpers/cluster-steps.ts';
import { createDatabase, PostgresCluster } from './helpers/postgres.ts';
import { Api, ServerProcess } from './helpers/server-process.ts';

/**
 * Snapshots and sandboxes between nodes (PostgreSQL, two API replicas, two gVisor nodes): a fork
 * placed off its snapshot's cordoned node fetches the snapshot there and continues its processes;
 * drain and migrate move paused and running sandboxes with their processes; a node whose holder is
 * lost answers 503 saying so.
 */
const key = randomBytes(32);
/** Long enough for a node killed by a test to restart on a loaded host before it is declared lost (its sandboxes would fail). */
const LOST_MS = 15_000;
const env = (extra: Record<string, string>) => ({ SANDPIT_CLUSTER_KEY: key.toString('hex'), SANDPIT_DRIVER: 'gvisor', SANDPIT_NODE_LOST_MS: String(LOST_MS), ...extra });
const COUNTER = 'cd /tmp && (i=0; while true; do i=$((i+1)); echo $i > count.new && mv count.new count; sleep 0.05; done) >/dev/null 2>&1 &';

let pg: PostgresCluster;
let db: { url: string; drop: () => Promise<void> };
let apiProc: ServerProcess;
/** A second replica: it learns of a move from the store, not from doing it. */
let otherApiProc: ServerProcess;
let otherApi: Api;
const nodes = new Map<string, ServerProcess>();
let api: Api;

const internal = (path: string, method = 'GET') => fetch(`${apiProc.url}${path}`, { method, headers: { authorization: `Bearer ${signInternalToken(key, API_AUDIENCE, 60_000)}` } });
async function internalNodes(): Promise<any[]> {
  const res = await internal('/internal/nodes');
  assert.equal(res.status, 200);
  return ((await res.json()) as { nodes: any[] }).nodes;
}
async function exec(id: string, command: string): Promise<string> {
  const res = await api.post(`/sandboxes/${id}/exec`, { command });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.stdout.trim();
}
/** The node holding every live sandbox of this test in turn: the one whose count went up. */
async function sandboxCounts(): Promise<Map<string, number>> {
  return new Map((await internalNodes()).map((n) => [n.id, n.sandboxes]));
}
async function setState(action: 'cordon' | 'uncordon' | 'drain', id: string): Promise<void> {
  assert.equal((await internal(`/internal/nodes/${id}/${action}`, 'POST')).status, 204);
  // Replicas read node states at most every 250 ms (docs/cluster.md).
  await new Promise((r) => setTimeout(r, 300));
}

before(async () => {
  pg = await PostgresCluster.start();
  db = await createDatabase(pg.adminUrl);
  apiProc = await ServerProcess.start(env({ SANDPIT_DATABASE_URL: db.url, SANDPIT_ROLE: 'api' }));
  otherApiProc = await ServerProcess.start(env({ SANDPIT_DATABASE_URL: db.url, SANDPIT_ROLE: 'api' }));
  const started = await ServerProcess.startAll(
    [1, 2].map((i) =>
      env({
        SANDPIT_DATABASE_URL: db.url,
        SANDPIT_ROLE: 'node',
        SANDPIT_NODE_ID: `m${i}`,
        SANDPIT_API_URL: `${apiProc.url},${otherApiProc.url}`,
        SANDPIT_NET_POOL: `100.${110 + i}.0.0/16`,
        SANDPIT_PUBLIC_URL: apiProc.url,
      }),
    ),
  );
  started.forEach((n, i) => nodes.set(`m${i + 1}`, n));
  api = new Api(apiProc.url, apiProc.key);
  otherApi = new Api(otherApiProc.url, apiProc.key);
  await until('two ready nodes', async () => (await internalNodes()).filter((n) => n.state === 'ready').length === 2);
});

after(async () => {
  await apiProc?.stop().catch(() => undefined);
  await otherApiProc?.stop().catch(() => undefined);
  for (const n of nodes.values()) await n.stop().catch(() => undefined);
  await db?.drop().catch(() => undefined);
  await pg?.stop();
});

test("a fork placed off its snapshot's cordoned node: the snapshot is shipped there, its team template rebuilt there, and its processes continue", async () => {
  const tpl = await api.post('/templates', { name: 'shipped', steps: [{ type: 'run', command: 'echo from-template > /home/user/layer.txt' }] });
  assert.equal(tpl.status, 202, JSON.stringify(tpl.body));
  await until('template ready', async () => (await api.get(`/templates/${tpl.body.id}`)).body.status === 'ready', 120_000);
  const before = await sandboxCounts();
  const sb = await api.post('/sandboxes', { from_template: 'shipped' });
  assert.equal(sb.status, 201, JSON.stringify(sb.body));
  const holder = [...(await sandboxCounts())].find(([id, n]) => n > (before.get(id) ?? 0))![0];
  const other = [...nodes.keys()].find((id) => id !== holder)!;
  await exec(sb.body.id, `echo shipped > /home/user/mark && ${COUNTER}`);
  await until('the counter runs', async () => Number(await exec(sb.body.id, 'cat /tmp/count 2>/dev/null || echo 0')) > 0);
  const snap = await api.post(`/sandboxes/${sb.body.id}/snapshot`, {});
  assert.ok(snap.status === 201 || snap.status === 202, JSON.stringify(snap.body));
  const ready = await until('snapshot ready', async () => {
    const s = await api.get(`/snapshots/${snap.body.id}`);
    return s.body.status === 'ready' && s.body;
  });
  await setState('cordon', holder);
  try {
    assert.equal((await internalNodes()).find((n) => n.id === other).templates, 0, 'the other node has no copy of the template yet');
    const counts = await sandboxCounts();
    const fork = await api.post('/sandboxes', { from_snapshot: ready.id });
    assert.equal(fork.status, 201, JSON.stringify(fork.body));
    const after = await sandboxCounts();
    assert.equal(after.get(other), counts.get(other)! + 1, 'the fork runs on the node without the snapshot');
    assert.equal(after.get(holder), counts.get(holder), 'the cordoned holder took no sandbox');
    assert.equal(await exec(fork.body.id, 'cat /home/user/mark'), 'shipped');
    assert.equal(await exec(fork.body.id, 'cat /home/user/layer.txt'), 'from-template');
    // The copy kept on the other node counts in the snapshot's size: about twice what its holder alone keeps.
    const grown = (await api.get(`/snapshots/${ready.id}`)).body.size_bytes;
    assert.ok(grown > ready.size_bytes * 1.5 && grown < ready.size_bytes * 2.5, `${grown} vs ${ready.size_bytes}`);
    await until('the template rebuilt on the fork node', async () => (await internalNodes()).find((n) => n.id === other).templates > 0);
    // The counter process came along in the checkpoint and keeps counting there.
    const c1 = Number(await exec(fork.body.id, 'cat /tmp/count'));
    assert.ok(c1 > 0);
    await until('the shipped counter continues', async () => Number(await exec(fork.body.id, 'cat /tmp/count')) > c1, 10_000);
    // A second fork there uses the copy it now holds.
    const again = await api.post('/sandboxes', { from_snapshot: ready.id });
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.equal(await exec(again.body.id, 'cat /home/user/mark'), 'shipped');
    for (const id of [fork.body.id, again.body.id, sb.body.id]) assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
  } finally {
    await setState('uncordon', holder);
  }
});

test('drain moves a paused sandbox and a running one to another node: the paused one resumes there, the running one keeps running there, both with their files and processes', async () => {
  const [x, y] = [...nodes.keys()] as [string, string];
  await setState('cordon', y);
  let paused: string;
  let running: string;
  try {
    const a = await api.post('/sandboxes', {});
    const b = await api.post('/sandboxes', {});
    assert.equal(a.status, 201, JSON.stringify(a.body));
    assert.equal(b.status, 201, JSON.stringify(b.body));
    [paused, running] = [a.body.id, b.body.id];
  } finally {
    await setState('uncordon', y);
  }
  assert.equal((await sandboxCounts()).get(x), 2);
  for (const id of [paused, running]) await exec(id, `echo moved > /home/user/mark && ${COUNTER}`);
  // The other replica now remembers the sandboxes on x.
  for (const id of [paused, running]) assert.equal((await otherApi.post(`/sandboxes/${id}/exec`, { command: 'true' })).status, 200);
  for (const id of [paused, running]) await until('the counter runs', async () => Number(await exec(id, 'cat /tmp/count 2>/dev/null || echo 0')) > 0);
  assert.equal((await api.post(`/sandboxes/${paused}/pause`)).status, 200);
  const drained = await internal(`/internal/nodes/${x}/drain`, 'POST');
  assert.equal(drained.status, 200);
  const answer = (await drained.json()) as { moved: { id: string; to: string }[]; left: number; failed: unknown[] };
  const byId = (l: { id: string; to: string }[]) => [...l].sort((p, q) => p.id.localeCompare(q.id));
  assert.deepEqual({ ...answer, moved: byId(answer.moved) }, { moved: byId([paused, running].map((id) => ({ id, to: y }))), left: 0, failed: [] });
  try {
    const counts = await sandboxCounts();
    assert.equal(counts.get(x), 0, 'the draining node is empty');
    assert.equal(counts.get(y), 2, 'both are on the other node');
    assert.equal((await api.get(`/sandboxes/${paused}`)).body.status, 'paused');
    const moved = await api.get(`/sandboxes/${running}`);
    assert.equal(moved.body.status, 'active', 'the running one runs on after its move');
    assert.equal(moved.body.node, y);
    // x takes sandboxes again at once; the other replica, which did not move them, still finds them on y.
    await setState('uncordon', x);
    await new Promise((r) => setTimeout(r, 1100));
    const resumed = await otherApi.post(`/sandboxes/${paused}/resume`);
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
    for (const id of [paused, running]) {
      assert.equal(await exec(id, 'cat /home/user/mark'), 'moved');
      const c1 = Number(await exec(id, 'cat /tmp/count'));
      await until('the moved counter continues', async () => Number(await exec(id, 'cat /tmp/count')) > c1, 10_000);
    }
    // Its address now comes from the new node's pool (100.<110+i>.0.0/16).
    const addr = await exec(paused, 'cat /proc/net/fib_trie 2>/dev/null | grep -o "100\\.11[0-9]\\.[0-9.]*" | sort -u | head -3; ip -4 -o addr 2>/dev/null');
    assert.match(addr, new RegExp(`100\\.${110 + Number(y.slice(1))}\\.`), addr);
    assert.equal((await otherApi.post(`/sandboxes/${running}/exec`, { command: 'echo via-the-other-replica' })).body.stdout, 'via-the-other-replica\n');
    for (const id of [paused, running]) assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
  } finally {
    await setState('uncordon', x);
  }
});

test('migrate moves a running sandbox with its memory: migrating while it moves, then active on the named node with the same id and access token; bad input changes nothing; one paused keeping only its disk moves its disk', async () => {
  const sb = await api.post('/sandboxes', { metadata: { case: 'migrate' } });
  assert.equal(sb.status, 201, JSON.stringify(sb.body));
  const id: string = sb.body.id;
  const from: string = (await api.get(`/sandboxes/${id}`)).body.node;
  assert.ok(nodes.has(from), `GET shows the node holding it: ${from}`);
  const to = [...nodes.keys()].find((n) => n !== from)!;
  // A process whose state lives only in memory: a shell variable counting up.
  await exec(id, `echo kept > /home/user/mark && ${COUNTER}`);
  await until('the counter runs', async () => Number(await exec(id, 'cat /tmp/count 2>/dev/null || echo 0')) > 0);
  // The counting subshell (the pattern does not match this command's own shell).
  const pid = await exec(id, "pgrep -o -f 'count[.]new'");
  assert.match(pid, /^\d+$/);

  // Bad input changes nothing.
  for (const [body, status] of [
    [{ node: to, extra: 1 }, 400],
    [{ node: 'no-such-node' }, 404],
    [{ node: from }, 409],
  ] as const) {
    const res = await api.post(`/sandboxes/${id}/migrate`, body);
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.equal(res.body.error.code, { 400: 'bad_request', 404: 'not_found', 409: 'conflict' }[status]);
  }
  assert.equal((await api.get(`/sandboxes/${id}`)).body.node, from);

  const before = Number(await exec(id, 'cat /tmp/count'));
  const moved = await api.post(`/sandboxes/${id}/migrate`, { node: to });
  assert.equal(moved.status, 200, JSON.stringify(moved.body));
  assert.equal(moved.body.status, 'active');
  assert.equal(moved.body.node, to);
  assert.equal(moved.body.id, id);
  assert.deepEqual(moved.body.metadata, { case: 'migrate' });
  // Every process came along with its memory: the same counter process, counting on from where it was.
  assert.equal(await exec(id, "pgrep -o -f 'count[.]new'"), pid);
  const after = Number(await exec(id, 'cat /tmp/count'));
  assert.ok(after >= before, `${after} >= ${before}`);
  await until('the counter continues on the new node', async () => Number(await exec(id, 'cat /tmp/count')) > after, 10_000);
  assert.equal(await exec(id, 'cat /home/user/mark'), 'kept');
  // The same access token reaches it on the data plane, through either replica.
  for (const a of [apiProc.url, otherApiProc.url]) {
    const res = await fetch(`${a}/exec`, {
      method: 'POST',
      headers: { 'x-platform-sandbox-id': id, 'x-access-token': sb.body.access_token, 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'cat /home/user/mark' }),
    });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { stdout: string }).stdout, 'kept\n');
  }
  const events = (await api.get(`/sandboxes/${id}/events`)).body.events.map((e: { type: string }) => e.type);
  assert.deepEqual(
    events.filter((t: string) => t.startsWith('migrat')),
    ['migrating', 'migrated'],
  );
  assert.ok(!events.includes('paused'), 'a move is not a pause');
  // The operator's view (`sandpit cluster status --json`) lists it under its new node.
  const listed = await internal('/internal/nodes?sandboxes=true');
  const byNode = ((await listed.json()) as { nodes: { id: string; sandbox_list: { id: string; status: string }[] }[] }).nodes;
  assert.deepEqual(
    byNode.find((n) => n.id === to)!.sandbox_list.find((x) => x.id === id),
    { id, status: 'active' },
  );
  assert.ok(!byNode.find((n) => n.id === from)!.sandbox_list.some((x) => x.id === id));

  // Paused keeping only its disk, it moves as its disk alone (placement picks the only other node) and boots there on resume.
  assert.equal((await api.post(`/sandboxes/${id}/pause`, { keep_memory: false })).status, 200);
  const diskOnly = await api.post(`/sandboxes/${id}/migrate`, {});
  assert.equal(diskOnly.status, 200, JSON.stringify(diskOnly.body));
  assert.equal(diskOnly.body.status, 'paused');
  assert.equal(diskOnly.body.kept_memory, false);
  assert.equal(diskOnly.body.node, from);
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal(await exec(id, 'cat /home/user/mark; pgrep -f "count[.]new" >/dev/null && echo running || echo booted'), 'kept\nbooted');
  assert.equal((await api.get(`/sandboxes/${id}`)).body.node, from);
  // A move answers before its source's copy is removed; the copy still goes. (The move back above came
  // while the first move's copy on `from` was being removed, and waited for that.)
  const bare = id.replace(/^sb-[a-z0-9]+-/, '');
  const held = (node: string) => existsSync(join(nodes.get(node)!.dataDir, 'gvisor', 'sandboxes', bare));
  assert.ok(held(from));
  await until(`no copy left on ${to}`, async () => !held(to), 30_000);
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
});

test('a node killed during a live move (the target, then the source): the sandbox ends on exactly one node with its processes', async () => {
  const sb = await api.post('/sandboxes', {});
  assert.equal(sb.status, 201, JSON.stringify(sb.body));
  const id: string = sb.body.id;
  const bare = id.replace(/^sb-[a-z0-9]+-/, '');
  const held = (node: string) => existsSync(join(nodes.get(node)!.dataDir, 'gvisor', 'sandboxes', bare));
  const other = (node: string) => [...nodes.keys()].find((n) => n !== node)!;
  // Enough files that the copy takes a while, so the kill lands in the middle of the move.
  await exec(id, `head -c 200M /dev/urandom > /home/user/ballast && ${COUNTER}`);
  await until('the counter runs', async () => Number(await exec(id, 'cat /tmp/count 2>/dev/null || echo 0')) > 0);
  let from: string = (await api.get(`/sandboxes/${id}`)).body.node;
  for (const victimRole of ['target', 'source'] as const) {
    const to = other(from);
    const victim = victimRole === 'target' ? to : from;
    const moving = api.post(`/sandboxes/${id}/migrate`, { node: to });
    const deadline = Date.now() + 15_000;
    while ((await api.get(`/sandboxes/${id}`)).body.status !== 'migrating') {
      assert.ok(Date.now() < deadline, 'the sandbox never showed migrating');
      await new Promise((r) => setTimeout(r, 10));
    }
    await new Promise((r) => setTimeout(r, 150));
    await nodes.get(victim)!.kill9();
    // Back at once, as a supervisor would restart it, well inside the loss deadline.
    const [answer] = await Promise.all([moving, nodes.get(victim)!.launch()]);
    assert.equal(answer.status, 503, `the ${victimRole} was killed mid-move: ${JSON.stringify(answer.body)}`);
    await until('both nodes ready again', async () => (await internalNodes()).filter((n) => n.state === 'ready').length === 2, 60_000);
    // Replicas read the node list at most every second (docs/cluster.md).
    await new Promise((r) => setTimeout(r, 1100));
    const rec = (await api.get(`/sandboxes/${id}`)).body;
    assert.ok(rec.status === 'active' || rec.status === 'paused', JSON.stringify(rec));
    assert.equal(rec.node, from, `a move cut short leaves it on its source (the ${victimRole} was killed)`);
    assert.ok(held(from), 'its source holds it');
    await until(`no copy left on ${to}`, async () => !held(to), 45_000);
    if (rec.status === 'paused') assert.equal((await api.post(`/sandboxes/${id}/resume`)).status, 200);
    const c1 = Number(await exec(id, 'cat /tmp/count'));
    await until('its counter continues', async () => Number(await exec(id, 'cat /tmp/count')) > c1, 10_000);
    from = rec.node;
  }
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
});

test("a fork whose snapshot's holder is lost: 503 saying the snapshot cannot be shipped; with the holder back it forks", async () => {
  const before = await sandboxCounts();
  const sb = await api.post('/sandboxes', {});
  assert.equal(sb.status, 201, JSON.stringify(sb.body));
  const holder = [...(await sandboxCounts())].find(([id, n]) => n > (before.get(id) ?? 0))![0];
  const snap = await api.post(`/sandboxes/${sb.body.id}/snapshot`, {});
  assert.ok(snap.status === 201 || snap.status === 202, JSON.stringify(snap.body));
  await until('snapshot ready', async () => (await api.get(`/snapshots/${snap.body.id}`)).body.status === 'ready');
  assert.equal((await api.del(`/sandboxes/${sb.body.id}`)).status, 204);
  const victim = nodes.get(holder)!;
  await victim.kill9();
  await until(`node ${holder} lost`, async () => (await internalNodes()).find((n) => n.id === holder && n.state === 'lost'), LOST_MS + 20_000);
  const fork = await api.post('/sandboxes', { from_snapshot: snap.body.id });
  assert.equal(fork.status, 503, JSON.stringify(fork.body));
  assert.match(fork.body.error.message, new RegExp(`node '${holder}', which holds the snapshot, is lost or not reachable, so the snapshot cannot be shipped`));
  await victim.launch();
  await until(`node ${holder} ready again`, async () => (await internalNodes()).find((n) => n.id === holder && n.state === 'ready'));
  const again = await api.post('/sandboxes', { from_snapshot: snap.body.id });
  assert.equal(again.status, 201, JSON.stringify(again.body));
  assert.equal((await api.del(`/sandboxes/${again.body.id}`)).status, 204);
  assert.equal((await api.del(`/snapshots/${snap.body.id}`)).status, 204);
});
