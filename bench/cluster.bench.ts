/**
 * Issues 12 and 13: what several hosts and regions add, next to a single host, in the same run.
 * - create -> first exec (`node -v`) and an exec round trip: single host (SANDPIT_ROLE=all) against
 *   an API replica forwarding to its node, and a region forwarding to the home region's replica;
 * - first byte of an exec stream, direct and routed through another region;
 * - placement: 100,000 sandbox rows and 50 nodes in PostgreSQL, `Placement.choose` in process.
 * Goals: at most 2 ms added per routed request on one machine; placement p99 <= 5 ms.
 * Run: node bench/cluster.bench.ts   (BENCH_CREATES default 10, BENCH_EXECS default 200, BENCH_ROWS default 100000)
 */
import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { systemClock } from '../packages/server/src/clock.ts';
import { Placement } from '../packages/server/src/services/fleet/placement.ts';
import { NodeStore } from '../packages/server/src/store/nodes.ts';
import { createDatabase, PostgresCluster } from '../packages/server/test/helpers/postgres.ts';
import { Api, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, percentile, report, sample } from './stats.ts';

const CREATES = Number(process.env.BENCH_CREATES ?? 10);
const EXECS = Number(process.env.BENCH_EXECS ?? 200);
const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const NODES = 50;
const key = randomBytes(32).toString('hex');
const base = { SANDPIT_DRIVER: 'container', SANDPIT_RATE_LIMIT: '0', SANDPIT_CLUSTER_KEY: key };

const added = (name: string, ours: number[], direct: number[]) =>
  console.log(`${name.padEnd(44)} +${(median(ours) - median(direct)).toFixed(2)} ms median (${(median(ours) / median(direct)).toFixed(2)}x of direct)`);

async function until(f: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300 && !(await f()); i++) await new Promise((r) => setTimeout(r, 100));
}

const cluster = await PostgresCluster.start();
const servers: ServerProcess[] = [];
try {
  const single = await createDatabase(cluster.adminUrl);
  const shared = await createDatabase(cluster.adminUrl);
  const host = await ServerProcess.start({ ...base, SANDPIT_DATABASE_URL: single.url });
  servers.push(host);
  const apiA = await ServerProcess.start({ ...base, SANDPIT_DATABASE_URL: shared.url, SANDPIT_ROLE: 'api', SANDPIT_REGION: 'a' });
  const apiB = await ServerProcess.start({ ...base, SANDPIT_DATABASE_URL: shared.url, SANDPIT_ROLE: 'api', SANDPIT_REGION: 'b' });
  servers.push(apiA, apiB);
  const node = await ServerProcess.start({
    ...base,
    SANDPIT_DATABASE_URL: shared.url,
    SANDPIT_ROLE: 'node',
    SANDPIT_REGION: 'a',
    SANDPIT_NODE_ID: 'a1',
    SANDPIT_API_URL: apiA.url,
    SANDPIT_NET_POOL: '100.120.0.0/16',
    SANDPIT_PUBLIC_URL: apiA.url,
  });
  servers.push(node);
  const direct = new Api(host.url, host.key);
  const viaReplica = new Api(apiA.url, apiA.key);
  const viaRegion = new Api(apiB.url, apiA.key);
  await until(async () => (await viaReplica.post('/sandboxes', {})).status === 201);

  const createThenExec = (api: Api) => async () => {
    const sb = await api.post('/sandboxes', {});
    if (sb.status !== 201) throw new Error(`create ${sb.status}: ${JSON.stringify(sb.body)}`);
    const r = await api.post(`/sandboxes/${sb.body.id}/exec`, { command: 'node -v' });
    if (r.status !== 200 || r.body.exit_code !== 0) throw new Error(`exec ${r.status}`);
  };
  console.log(`create -> first exec (node -v), sequential, n=${CREATES} each (crun)`);
  const createDirect = await sample(CREATES, createThenExec(direct));
  const createReplica = await sample(CREATES, createThenExec(viaReplica));
  report('single host', createDirect);
  report('through an API replica to its node', createReplica);
  added('  added by the replica', createReplica, createDirect);

  const sbDirect = (await direct.post('/sandboxes', {})).body.id as string;
  const sbA = (await viaReplica.post('/sandboxes', {})).body.id as string;
  const execOn = (api: Api, id: string) => async () => {
    const r = await api.post(`/sandboxes/${id}/exec`, { command: 'true' });
    if (r.status !== 200) throw new Error(`exec ${r.status}`);
  };
  console.log(`\nexec round trip (true), n=${EXECS} each`);
  const rttDirect = await sample(EXECS, execOn(direct, sbDirect));
  const rttReplica = await sample(EXECS, execOn(viaReplica, sbA));
  const rttRegion = await sample(EXECS, execOn(viaRegion, sbA));
  report('single host', rttDirect);
  report('API replica -> node', rttReplica);
  report('region b -> region a replica -> node', rttRegion);
  added('  added by the replica', rttReplica, rttDirect);
  added('  added by the region hop', rttRegion, rttReplica);

  const firstByte = (api: Api, id: string) => async () => {
    const t0 = performance.now();
    const res = await fetch(`${api.base}/sandboxes/${id}/exec/stream`, {
      method: 'POST',
      headers: { 'x-api-key': apiA.key, 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'echo x' }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    const ms = performance.now() - t0;
    while (!(await reader.read()).done);
    return ms;
  };
  const firsts = async (f: () => Promise<number>) => {
    const out: number[] = [];
    for (let i = 0; i < EXECS / 2; i++) out.push(await f());
    return out;
  };
  console.log(`\nexec stream, first byte, n=${EXECS / 2} each`);
  const fbReplica = await firsts(firstByte(viaReplica, sbA));
  const fbRegion = await firsts(firstByte(viaRegion, sbA));
  report('region a (home)', fbReplica);
  report('region b (routed)', fbRegion);
  added('  added by the region hop', fbRegion, fbReplica);

  // Placement over a big installation: its reads do not grow with the sandbox rows.
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: shared.url, max: 4 }) }) });
  try {
    const now = Date.now();
    const nodes = Array.from({ length: NODES }, (_, i) => ({
      id: `bench-${i}`,
      region: 'bench',
      url: 'http://127.0.0.1:9',
      vcpus: 512,
      // Room for the 2,000 rows each node holds (512 MiB each) and the placements timed.
      memory_mib: 4_194_304,
      disk_mib: 1_000_000,
      max_sandboxes: 0,
      engines: '["gvisor"]',
      labels: '{}',
      templates: '[]',
      sandboxes: 0,
      allocated_vcpus: 0,
      allocated_memory_mib: 0,
      state: 'ready',
      registered_at: now,
      heartbeat_at: now + 3_600_000,
      lost_at: null,
    }));
    await db.insertInto('nodes').values(nodes).execute();
    const { id: teamId } = await db.selectFrom('teams').select('id').executeTakeFirstOrThrow();
    // One statement: the rows only need to be there, spread over the nodes.
    await sql`
      insert into sandboxes (id, team_id, name, template_id, driver, region, status, metadata, env, network, secrets, preview_access,
        resources, access_token, auto_pause_seconds, auto_delete_seconds, auto_pause_at, auto_delete_at, active_since, paused_at,
        latest_snapshot_id, failure_reason, node_id, vcpu_count, memory_mib, created_at, updated_at, deleted_at)
      select gen_random_uuid()::text, ${teamId}, 'bench-' || i, 'platform/base', 'gvisor', 'bench', case when i % 3 = 0 then 'active' else 'paused' end,
        '{}', '{}', null, '{}', 'private', '{"vcpu_count":1,"memory_mib":512,"disk_mib":1024}', gen_random_uuid()::text, null, null, null, null, null, null,
        null, null, 'bench-' || (i % ${NODES}), 1, 512, ${now - ROWS}::bigint + i, ${now}::bigint, null
      from generate_series(1, ${ROWS}) as i`.execute(db);
    await sql`analyze`.execute(db);
    const store = new NodeStore(db as never);
    // Nodes report what they hold, as heartbeats would.
    for (const [id, load] of await store.load(nodes.map((n) => n.id))) {
      await db.updateTable('nodes').set({ sandboxes: load.sandboxes, allocated_vcpus: load.vcpus, allocated_memory_mib: load.memoryMib }).where('id', '=', id).execute();
    }
    const placement = new Placement({ store, clock: systemClock, lostMs: 10_000 });
    const times = await sample(500, async () => (await placement.choose({ region: 'bench', vcpus: 1, memoryMib: 512 })).release());
    console.log(`\nplacement over ${ROWS} sandbox rows and ${NODES} nodes (PostgreSQL), n=500`);
    report('Placement.choose', times, 'p99 <= 5 ms');
    console.log(`${'  p99'.padEnd(44)} ${percentile(times, 99).toFixed(2)} ms`);
    const sums = await sample(50, () => store.load(nodes.map((n) => n.id)));
    report('for comparison: summing every sandbox row', sums);
  } finally {
    // Before the servers stop: their shutdown deletes the team's sandboxes, and these have no engine.
    await db.deleteFrom('sandboxes').where('region', '=', 'bench').execute();
    await db.deleteFrom('nodes').where('region', '=', 'bench').execute();
    await db.destroy();
  }
  // Replicas first: their deletes reach the node while it runs.
  for (const s of [apiA, apiB, host, node]) await s.stop();
  servers.length = 0;
  await single.drop().catch(() => undefined);
  await shared.drop().catch(() => undefined);
} finally {
  for (const s of servers) await s.stop().catch(() => undefined);
  await cluster.stop();
}
