import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { API_AUDIENCE, signInternalToken } from '../src/internal-token.ts';
import { clusterHostKey } from '../src/services/ssh/host-key.ts';
import { createDatabase, PostgresCluster } from './helpers/postgres.ts';
import { Api, freePort, parseSse, ServerProcess } from './helpers/server-process.ts';
import { terminalEcho, until } from './helpers/cluster-steps.ts';
import { getThroughForward, run, serveOn8080, strictSshOptions } from './helpers/ssh-client.ts';

/**
 * Several hosts on one machine: PostgreSQL, two API replicas and three nodes (gVisor), each its own
 * process, data directory, network pool and kernel object names. Sandboxes are created through both
 * replicas and spread over the nodes; one replica drives what the other created; a killed node's
 * sandboxes end failed (node_lost) and, when it comes back, it destroys them (the store wins).
 */
const SANDBOXES = 30;
const key = randomBytes(32);
// Short enough for the tests to see a loss, long enough that a loaded 2-core host keeps live nodes live.
const NODE_LOST_MS = 8000;
const env = (extra: Record<string, string>) => ({ SANDPIT_CLUSTER_KEY: key.toString('hex'), SANDPIT_DRIVER: 'gvisor', SANDPIT_NODE_LOST_MS: String(NODE_LOST_MS), ...extra });

let pg: PostgresCluster;
let db: { url: string; drop: () => Promise<void> };
const apis: ServerProcess[] = [];
const nodes: ServerProcess[] = [];
let api: Api[];
/** Each replica's SSH gateway. */
const sshPorts: number[] = [];

async function internalNodes(): Promise<any[]> {
  const res = await fetch(`${apis[0]!.url}/internal/nodes`, { headers: { authorization: `Bearer ${signInternalToken(key, API_AUDIENCE, 60_000)}` } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { nodes: any[] }).nodes;
}

before(async () => {
  pg = await PostgresCluster.start();
  db = await createDatabase(pg.adminUrl);
  for (let i = 0; i < 2; i++) {
    sshPorts.push(await freePort());
    apis.push(await ServerProcess.start(env({ SANDPIT_DATABASE_URL: db.url, SANDPIT_ROLE: 'api', SANDPIT_SSH_PORT: String(sshPorts[i]) })));
  }
  const apiUrls = apis.map((a) => a.url).join(',');
  nodes.push(
    ...(await ServerProcess.startAll(
      [1, 2, 3].map((i) =>
        env({ SANDPIT_DATABASE_URL: db.url, SANDPIT_ROLE: 'node', SANDPIT_NODE_ID: `n${i}`, SANDPIT_API_URL: apiUrls, SANDPIT_NET_POOL: `100.${100 + i}.0.0/16`, SANDPIT_PUBLIC_URL: apis[0]!.url }),
      ),
    )),
  );
  // The first replica created the team; its key works on every replica.
  api = apis.map((a) => new Api(a.url, apis[0]!.key));
  await until('three ready nodes', async () => (await internalNodes()).filter((n) => n.state === 'ready').length === 3);
});

after(async () => {
  // Replicas first: their deletes reach the live nodes, which destroy the sandboxes.
  for (const a of apis) await a.stop().catch(() => undefined);
  for (const n of nodes) await n.stop().catch(() => undefined);
  await db?.drop().catch(() => undefined);
  await pg?.stop();
});

test('sandboxes spread over nodes and every operation works through the replica that did not create them', async () => {
  const created: { id: string; token: string; via: number }[] = [];
  const queue = Array.from({ length: SANDBOXES }, (_, i) => i);
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        const res = await api[i % 2]!.post('/sandboxes', { metadata: { n: String(i) } });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        created.push({ id: res.body.id, token: res.body.access_token, via: i % 2 });
      }
    }),
  );
  const load = await internalNodes();
  assert.equal(
    load.reduce((sum, n) => sum + n.sandboxes, 0),
    SANDBOXES,
  );
  for (const n of load) assert.ok(n.sandboxes >= 5, `node ${n.id} holds ${n.sandboxes} of ${SANDBOXES}: not spread`);

  const list = await api[1]!.get(`/sandboxes?limit=100`);
  assert.equal(list.body.sandboxes.length, SANDBOXES);

  const sb = created.find((c) => c.via === 0)!;
  const other = api[1]!;
  const dp = { 'x-platform-sandbox-id': sb.id, 'x-access-token': sb.token };
  const exec = await other.post(`/sandboxes/${sb.id}/exec`, { command: 'echo hello from $(hostname)' });
  assert.equal(exec.status, 200, JSON.stringify(exec.body));
  assert.equal(exec.body.stdout, 'hello from sandbox\n');

  // Data plane: a file up and down, streamed through the replica to the node.
  const blob = randomBytes(3 * 1024 * 1024);
  const up = await fetch(`${other.base}/files?path=/tmp/blob.bin`, { method: 'PUT', headers: { ...dp, 'content-type': 'application/octet-stream' }, body: blob });
  assert.equal(up.status, 200, await up.text());
  const down = await fetch(`${other.base}/files?path=/tmp/blob.bin`, { headers: dp });
  assert.equal(down.status, 200);
  assert.ok(Buffer.from(await down.arrayBuffer()).equals(blob));

  // A terminal over WebSocket through the replica.
  await terminalEcho(other, dp, 'ping-through-replica');

  // Pause and resume keep the processes; a snapshot and its fork run on the node holding it.
  await other.post(`/sandboxes/${sb.id}/exec`, { command: 'echo 41 > /tmp/n' });
  assert.equal((await other.post(`/sandboxes/${sb.id}/pause`)).status, 200);
  assert.equal((await api[0]!.get(`/sandboxes/${sb.id}`)).body.status, 'paused');
  assert.equal((await other.post(`/sandboxes/${sb.id}/resume`)).status, 200);
  assert.equal((await other.post(`/sandboxes/${sb.id}/exec`, { command: 'cat /tmp/n' })).body.stdout, '41\n');
  const snap = await other.post(`/sandboxes/${sb.id}/snapshot`, {});
  assert.ok(snap.status === 201 || snap.status === 202, JSON.stringify(snap.body));
  const ready = await until('snapshot ready', async () => {
    const s = await api[0]!.get(`/snapshots/${snap.body.id}`);
    return s.body.status === 'ready' && s.body;
  });
  const fork = await api[0]!.post('/sandboxes', { from_snapshot: ready.id });
  assert.equal(fork.status, 201, JSON.stringify(fork.body));
  assert.equal((await other.post(`/sandboxes/${fork.body.id}/exec`, { command: 'cat /tmp/n' })).body.stdout, '41\n');
  assert.equal((await other.del(`/snapshots/${ready.id}`)).status, 204);
});

test('SSH through either API replica reaches the node holding the sandbox: status, stderr, stdin, a terminal, scp, -L, a paused sandbox resumed, a wrong key refused', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cluster-ssh-'));
  const sb = (await api[0]!.post('/sandboxes', {})).body as { id: string };
  try {
    const keyFile = join(dir, 'id');
    const stranger = join(dir, 'stranger');
    for (const f of [keyFile, stranger]) assert.equal(spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', f]).status, 0);
    assert.equal((await api[1]!.post('/ssh-keys', { public_key: (await readFile(`${keyFile}.pub`, 'utf8')).trim() })).status, 201);
    // Both replicas present the cluster's one host key: the client checks it strictly.
    const known = join(dir, 'known_hosts');
    await writeFile(known, sshPorts.map((p) => `[127.0.0.1]:${p} ${clusterHostKey(key).publicLine}\n`).join(''));
    const opts = (identity = keyFile) => strictSshOptions(known, ['-o', 'BatchMode=yes', '-i', identity]);
    const ssh = (port: number, command: string[], input = '', extra: string[] = []) => run('ssh', [...opts(), ...extra, '-p', String(port), `${sb.id}@127.0.0.1`, ...command], input);

    for (const port of sshPorts) {
      const r = await ssh(port, ['echo out; echo err >&2; head -c 100000 | wc -c; exit 7'], 'x'.repeat(100_000));
      assert.deepEqual([r.status, r.stdout, r.stderr], [7, 'out\n100000\n', 'err\n']);
    }
    const tty = await ssh(sshPorts[1]!, ['tty'], '', ['-tt']);
    assert.match(tty.stdout, /^\/dev\/pts\/\d+/, tty.stderr);

    const blob = randomBytes(3 * 1024 * 1024);
    await writeFile(join(dir, 'blob'), blob);
    const scp = await run('scp', [...opts(), '-P', String(sshPorts[0]), join(dir, 'blob'), `${sb.id}@127.0.0.1:/tmp/blob`]);
    assert.equal(scp.status, 0, scp.stderr);
    const sum = await api[1]!.post(`/sandboxes/${sb.id}/exec`, { command: 'sha256sum < /tmp/blob' });
    assert.equal(sum.body.stdout.split(' ')[0], createHash('sha256').update(blob).digest('hex'));

    await api[0]!.post(`/sandboxes/${sb.id}/exec`, { command: serveOn8080('from-node') });
    assert.equal(await getThroughForward(opts(), sshPorts[1]!, sb.id), 'from-node\n');

    assert.equal((await api[1]!.post(`/sandboxes/${sb.id}/pause`)).status, 200);
    const awake = await ssh(sshPorts[0]!, ['echo awake']);
    assert.equal(awake.stdout, 'awake\n', awake.stderr);
    assert.equal((await api[0]!.get(`/sandboxes/${sb.id}`)).body.status, 'active');

    const refused = await run('ssh', [...opts(stranger), '-p', String(sshPorts[0]), `${sb.id}@127.0.0.1`, 'true']);
    assert.equal(refused.status, 255);
    assert.match(refused.stderr, /Permission denied/);
  } finally {
    await api[0]!.del(`/sandboxes/${sb.id}`);
    await rm(dir, { recursive: true, force: true });
  }
});

/** Cordons or uncordons a node through the internal API, as `sandpit cluster cordon` does. */
const cordon = (action: 'cordon' | 'uncordon', id: string) =>
  fetch(`${apis[0]!.url}/internal/nodes/${id}/${action}`, { method: 'POST', headers: { authorization: `Bearer ${signInternalToken(key, API_AUDIENCE, 60_000)}` } });

test("changes apply between sandboxes on different nodes: the source's layer is fetched from its node; conflicts as on one host", async () => {
  const made: { id: string; node: string }[] = [];
  const place = async () => {
    const res = await api[made.length % 2]!.post('/sandboxes', {});
    assert.equal(res.status, 201, JSON.stringify(res.body));
    made.push({ id: res.body.id, node: (await api[0]!.get(`/sandboxes/${res.body.id}`)).body.node });
    return made.at(-1)!;
  };
  try {
    // The target goes to the other node: the source's is cordoned while it is made (placement alone may use one node).
    const source = await place();
    assert.equal((await cordon('cordon', source.node)).status, 204);
    let target: { id: string; node: string };
    try {
      // Replicas read node states at most every 250 ms (docs/cluster.md).
      await new Promise((r) => setTimeout(r, 300));
      target = await place();
    } finally {
      await cordon('uncordon', source.node);
    }
    assert.notEqual(target.node, source.node, 'two sandboxes on different nodes');
    const sh = (id: string, command: string) => api[1]!.post(`/sandboxes/${id}/exec`, { command });
    await sh(
      source.id,
      'mkdir -p /home/user/proj && echo from-source > /home/user/proj/a.txt && echo theirs > /home/user/both.txt && head -c 2000000 /dev/urandom > /home/user/proj/big.bin && sha256sum /home/user/proj/big.bin > /tmp/sum',
    );
    assert.equal((await sh(source.id, 'sudo rm /etc/motd')).body.exit_code, 0);
    await sh(target.id, 'echo mine > /home/user/both.txt');
    const res = await api[0]!.post(`/sandboxes/${target.id}/changes/apply`, { from: source.id });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const applied = (res.body.applied as { path: string; kind: string }[]).map((a) => a.path);
    for (const p of ['/home/user/proj', '/home/user/proj/a.txt', '/home/user/proj/big.bin', '/etc/motd']) assert.ok(applied.includes(p), `${p} applied: ${JSON.stringify(res.body)}`);
    assert.deepEqual(
      res.body.conflicts.map((c: { path: string }) => c.path),
      ['/home/user/both.txt'],
    );
    const sum = (await sh(source.id, 'cat /tmp/sum')).body.stdout;
    const seen = await sh(target.id, 'cat /home/user/proj/a.txt /home/user/both.txt; sha256sum /home/user/proj/big.bin; test -e /etc/motd && echo motd-left || echo motd-gone');
    assert.equal(seen.body.stdout, `from-source\nmine\n${sum}motd-gone\n`);
    const again = await api[1]!.post(`/sandboxes/${target.id}/changes/apply`, { from: source.id });
    assert.deepEqual(again.body.applied, [], 'applying twice applies nothing the second time');
  } finally {
    for (const m of made) await api[0]!.del(`/sandboxes/${m.id}`);
  }
});

test('a team template built on one node reaches another by its recipe (the holder cordoned)', async () => {
  const res = await api[0]!.post('/templates', { name: 'across', steps: [{ type: 'run', command: 'echo made-here > /home/user/made.txt' }] });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  // The build's log is followed through the other replica, from the node that runs it.
  const logs = await fetch(`${api[1]!.base}/templates/${res.body.id}/builds/${res.body.build_id}/logs`, { headers: { 'x-api-key': apis[0]!.key } });
  assert.equal(logs.status, 200);
  const { events } = parseSse(await logs.text());
  assert.equal(events.at(-1).finished, true, JSON.stringify(events.at(-1)));
  const holder = await until('a node reporting the template', async () => (await internalNodes()).find((n) => n.templates > 0));
  assert.equal((await cordon('cordon', holder.id)).status, 204);
  try {
    assert.equal((await internalNodes()).find((n) => n.id === holder.id).state, 'cordoned');
    // Replicas read node states at most every 250 ms (docs/cluster.md).
    await new Promise((r) => setTimeout(r, 300));
    const sb = await api[1]!.post('/sandboxes', { from_template: 'across' });
    assert.equal(sb.status, 201, JSON.stringify(sb.body));
    const made = await api[0]!.post(`/sandboxes/${sb.body.id}/exec`, { command: 'cat /home/user/made.txt' });
    assert.equal(made.body.stdout, 'made-here\n');
    const nodesNow = await internalNodes();
    assert.equal(nodesNow.find((n) => n.id === holder.id).sandboxes, holder.sandboxes, 'the cordoned node took no sandbox');
    await until('a second node holding the template', async () => (await internalNodes()).filter((n) => n.templates > 0).length >= 2);
    assert.equal((await api[0]!.del(`/sandboxes/${sb.body.id}`)).status, 204);
  } finally {
    await cordon('uncordon', holder.id);
  }
});

test('PostgreSQL restarted for longer than the node deadline: 503 meanwhile, then every node and sandbox as before', async () => {
  const sb = await api[0]!.post('/sandboxes', {});
  assert.equal(sb.status, 201);
  await pg.halt();
  try {
    const res = await api[1]!.get(`/sandboxes/${sb.body.id}`);
    assert.equal(res.status, 503, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'unavailable');
    await new Promise((r) => setTimeout(r, NODE_LOST_MS + 2000));
  } finally {
    await pg.resume();
  }
  const back = await until('the API back', async () => {
    const r = await api[1]!.post(`/sandboxes/${sb.body.id}/exec`, { command: 'echo alive' });
    return r.status === 200 && r;
  });
  assert.equal(back.body.stdout, 'alive\n');
  // Heartbeats could not be recorded during the outage: that silence is not a node loss.
  await new Promise((r) => setTimeout(r, NODE_LOST_MS + 1000));
  assert.deepEqual(
    (await internalNodes()).map((n) => n.state),
    ['ready', 'ready', 'ready'],
  );
  const failed = ((await api[0]!.get('/sandboxes?limit=200')).body.sandboxes as { status: string }[]).filter((s) => s.status === 'failed');
  assert.deepEqual(failed, []);
  assert.equal((await api[0]!.del(`/sandboxes/${sb.body.id}`)).status, 204);
});

test('a killed node: its sandboxes end failed (node_lost), placement avoids it, and on return it destroys them', async () => {
  const victim = nodes[2]!;
  const before = (await api[0]!.get('/sandboxes?limit=100')).body.sandboxes as any[];
  await victim.kill9();
  const lost = await until('node n3 lost', async () => (await internalNodes()).find((n) => n.id === 'n3' && n.state === 'lost'), 20_000);
  assert.ok(lost);
  const failed = await until('its sandboxes failed', async () => {
    const now = (await api[1]!.get('/sandboxes?limit=100')).body.sandboxes as any[];
    const f = now.filter((s) => s.status === 'failed');
    return f.length > 0 && f;
  });
  for (const s of failed) assert.equal(s.failure_reason, 'node_lost');
  assert.ok(failed.length < before.length);
  const one = failed[0];
  const exec = await api[1]!.post(`/sandboxes/${one.id}/exec`, { command: 'true' });
  assert.equal(exec.status, 409, JSON.stringify(exec.body));
  assert.equal((await api[0]!.get(`/sandboxes/${one.id}`)).body.status, 'failed');

  for (let i = 0; i < 3; i++) assert.equal((await api[i % 2]!.post('/sandboxes', {})).status, 201);
  const n3 = (await internalNodes()).find((n) => n.id === 'n3');
  assert.equal(n3.sandboxes, 0, 'a lost node holds no capacity and takes no sandboxes');

  // Its engines outlived the SIGKILL; back, the node destroys them: the store's view wins.
  // runsc containers, in the state root of each runsc build (what `runsc list` reads).
  const gvisorDir = join(victim.dataDir, 'gvisor');
  const roots = async () => (await readdir(gvisorDir)).filter((d) => d.startsWith('runsc')).map((d) => join(gvisorDir, d));
  const running = async () => (await Promise.all((await roots()).map((r) => readdir(r)))).flat().filter((f) => f.endsWith('.state'));
  assert.ok((await running()).length > 0, 'the engines of the killed node still run');
  await victim.launch();
  await until('n3 ready again', async () => (await internalNodes()).find((n) => n.id === 'n3' && n.state === 'ready'));
  // The node reconciles beside its heartbeats (it is ready at the first one), destroying one engine after another.
  await until('n3 to destroy the engines of its failed sandboxes', async () => (await running()).length === 0);
  assert.equal((await api[0]!.get(`/sandboxes/${one.id}`)).body.status, 'failed');
  assert.equal((await api[0]!.del(`/sandboxes/${one.id}`)).status, 204);
});

test('a node refuses requests without a valid internal token, and the API refuses a node with a wrong one', async () => {
  const node = nodes[0]!;
  const direct = await new Api(node.url, apis[0]!.key).get('/sandboxes');
  assert.equal(direct.status, 401);
  const forged = await fetch(`${apis[0]!.url}/internal/nodes/heartbeat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${signInternalToken(randomBytes(32), API_AUDIENCE, 60_000)}` },
    body: JSON.stringify({ id: 'intruder', region: 'local', url: 'http://127.0.0.1:1', vcpus: 1, memory_mib: 1024, disk_mib: 1, max_sandboxes: 0, engines: [], labels: {}, templates: [] }),
  });
  assert.equal(forged.status, 401);
  assert.equal(
    (await internalNodes()).find((n) => n.id === 'intruder'),
    undefined,
  );
});

/** What the surviving replica and the nodes said about heartbeats and lost nodes: why a node was judged lost, if one was. */
function membershipLines(): string {
  const said = [apis[1]!, ...nodes].map((p, i) =>
    p.output
      .split('\n')
      .filter((l) => /heartbeat|node lost|lease/i.test(l))
      .slice(-8)
      .map((l) => `${i === 0 ? 'api1' : `n${i}`}: ${l.slice(0, 300)}`),
  );
  return said.flat().join('\n');
}

test('an API replica killed mid-storm: nothing it acknowledged is lost, and the other replica serves on', async () => {
  const acked: string[] = [];
  const storm = Array.from({ length: 12 }, async (_, i) => {
    const via = api[i % 2]!;
    const res = await via.post('/sandboxes', { metadata: { storm: String(i) } }).catch(() => undefined);
    if (res?.status === 201) acked.push(res.body.id);
  });
  await until('a first acknowledged create', async () => acked.length > 0, 60_000);
  await apis[0]!.kill9();
  await Promise.all(storm);
  const listed = new Set(((await api[1]!.get('/sandboxes?limit=200')).body.sandboxes as { id: string }[]).map((s) => s.id));
  for (const id of acked) assert.ok(listed.has(id), `acknowledged sandbox ${id} is missing`);
  for (const id of acked.slice(0, 3)) {
    const exec = await api[1]!.post(`/sandboxes/${id}/exec`, { command: 'echo ok' });
    assert.equal(exec.body.stdout, 'ok\n', `${exec.status} ${JSON.stringify(exec.body)}\n${membershipLines()}`);
  }
  await apis[0]!.launch();
});
