/**
 * Issue 12: `GET /sandboxes` over 100,000 sandbox rows, PostgreSQL next to SQLite in the same run.
 * Each store gets a real server process; the rows are written straight into its store (they have
 * no engine sandbox behind them, and are removed the same way before the server stops). Timed
 * through the API: the first page with a metadata filter, a page deep in the filtered list by
 * cursor, an unfiltered first page and page 101. Then the store's list query alone, old (before
 * migration 0014: matches by the (key, value) index, read in full and sorted; cursor as an OR
 * filter) next to new (the metadata index in list order; row-value cursor), on the same rows.
 * Goal (issue 12): p99 <= 20 ms per page on PostgreSQL. On a busy host the API timings measure CPU
 * scheduling more than the store: with statement logging on, PostgreSQL put a filtered page at about
 * 1 ms (parse, bind, execute) while the request around it took 10-50 ms at a load average of 20.
 * Run: node bench/store.bench.ts   (BENCH_ROWS, default 100000; BENCH_REQUESTS per case, default 300)
 */
import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { type Db, openDb } from '../packages/server/src/store/db.ts';
import type { Keyset } from '../packages/server/src/store/keyset.ts';
import { SandboxStore } from '../packages/server/src/store/sandboxes.ts';
import { createDatabase, PostgresCluster } from '../packages/server/test/helpers/postgres.ts';
import { Api, ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { median, percentile, sample } from './stats.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const GROUPS = 100;
const BATCH = 1000;
const ENV = { SANDPIT_DRIVER: 'container', SANDPIT_RATE_LIMIT: '0' };

interface Row {
  [column: string]: string | number | null;
}

/** Sandbox rows of one team, newest last, in GROUPS metadata groups, with their metadata index rows. */
function* batches(teamId: string): Generator<{ sandboxes: Row[]; metadata: Row[] }> {
  const t0 = Date.now() - ROWS * 1000;
  for (let start = 0; start < ROWS; start += BATCH) {
    const sandboxes: Row[] = [];
    const metadata: Row[] = [];
    for (let i = start; i < Math.min(ROWS, start + BATCH); i++) {
      const id = randomUUID();
      const meta = { group: `g${i % GROUPS}`, index: String(i) };
      const at = t0 + i * 1000;
      sandboxes.push({
        id,
        team_id: teamId,
        name: `bench-${i}`,
        template_id: 'platform/base',
        driver: 'container',
        region: 'local',
        status: 'paused',
        metadata: JSON.stringify(meta),
        env: '{}',
        network: null,
        secrets: '{}',
        preview_access: 'private',
        resources: JSON.stringify({ vcpu_count: 1, memory_mib: 512, disk_mib: 1024 }),
        access_token: randomUUID(),
        auto_pause_seconds: null,
        auto_delete_seconds: null,
        auto_pause_at: null,
        auto_delete_at: null,
        active_since: null,
        paused_at: at,
        latest_snapshot_id: null,
        created_at: at,
        updated_at: at,
        deleted_at: null,
      });
      for (const [key, value] of Object.entries(meta)) metadata.push({ sandbox_id: id, key, value, team_id: teamId, created_at: at });
    }
    yield { sandboxes, metadata };
  }
}

/** A store the bench writes into directly: the same Kysely statements on either engine. */
async function fill(db: Kysely<any>): Promise<number> {
  const t0 = performance.now();
  const { id: teamId } = await db.selectFrom('teams').select('id').executeTakeFirstOrThrow();
  for (const b of batches(teamId)) {
    await db.transaction().execute(async (tx) => {
      await tx.insertInto('sandboxes').values(b.sandboxes).execute();
      await tx.insertInto('sandbox_metadata').values(b.metadata).execute();
    });
  }
  return performance.now() - t0;
}

async function empty(db: Kysely<any>): Promise<void> {
  await db
    .deleteFrom('sandbox_metadata')
    .where('sandbox_id', 'in', db.selectFrom('sandboxes').select('id').where('name', 'like', 'bench-%'))
    .execute();
  await db.deleteFrom('sandboxes').where('name', 'like', 'bench-%').execute();
}

async function measure(label: string, server: ServerProcess): Promise<Record<string, number[]>> {
  const api = new Api(server.url, server.key);
  const filtered = '/sandboxes?limit=50&metadata.group=g7';
  const cursorAfter = async (path: string, pages: number) => {
    let cursor = '';
    for (let i = 0; i < pages; i++) {
      const next = (await api.get(`${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body.next_cursor;
      if (!next) break;
      cursor = next;
    }
    return cursor;
  };
  const deepFiltered = await cursorAfter(filtered, 10);
  const deep = await cursorAfter('/sandboxes?limit=50', 100);
  const check = await api.get(filtered);
  if (check.status !== 200 || check.body.sandboxes.length !== Math.min(50, ROWS / GROUPS)) throw new Error(`${label}: unexpected first page ${check.status}`);
  const get = (path: string) => async () => {
    const res = await api.get(path);
    if (res.status !== 200) throw new Error(`${label}: ${path} -> ${res.status}`);
  };
  return {
    'first page, metadata filter': await sample(REQUESTS, get(filtered)),
    'page 11 by cursor, metadata filter': await sample(REQUESTS, get(`${filtered}&cursor=${encodeURIComponent(deepFiltered)}`)),
    'first page, no filter': await sample(REQUESTS, get('/sandboxes?limit=50')),
    'page 101 by cursor, no filter': await sample(REQUESTS, get(`/sandboxes?limit=50&cursor=${encodeURIComponent(deep)}`)),
  };
}

/** The list query as it was before migration 0014, on the (key, value) index it had then. */
function oldList(db: Db, teamId: string, metadata: [string, string] | undefined, after: Keyset | undefined) {
  let q = db.selectFrom('sandboxes').selectAll().where('team_id', '=', teamId).where('deleted_at', 'is', null);
  if (metadata) {
    q = q.where('id', 'in', (eb) =>
      eb.selectFrom('sandbox_metadata').select('sandbox_metadata.sandbox_id').where('sandbox_metadata.key', '=', metadata[0]).where('sandbox_metadata.value', '=', metadata[1]),
    );
  }
  if (after) q = q.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(51).execute();
}

interface QueryTimes {
  old: number[];
  new: number[];
}

/** The store's list query alone, old next to new, per case. */
async function measureQueries(db: Db): Promise<Record<string, QueryTimes>> {
  const store = new SandboxStore(db);
  const { id: teamId } = await db.selectFrom('teams').select('id').executeTakeFirstOrThrow();
  const group: [string, string] = ['group', 'g7'];
  const positionAfter = async (metadata: [string, string][] | undefined, pages: number): Promise<Keyset | undefined> => {
    let after: Keyset | undefined;
    for (let i = 0; i < pages; i++) {
      const page = await store.list({ teamId, metadata, after, limit: 50 });
      if (page.length === 0) break;
      after = page.at(-1)!;
    }
    return after;
  };
  const cases: [string, [string, string] | undefined, Keyset | undefined][] = [
    ['first page, metadata filter', group, undefined],
    ['page 11, metadata filter', group, await positionAfter([group], 10)],
    ['first page, no filter', undefined, undefined],
    ['page 101, no filter', undefined, await positionAfter(undefined, 100)],
  ];
  const out: Record<string, QueryTimes> = {};
  await db.schema.createIndex('sandbox_metadata_kv').on('sandbox_metadata').columns(['key', 'value']).execute();
  await sql`analyze`.execute(db);
  try {
    for (const [name, metadata, after] of cases) {
      const old = () => oldList(db, teamId, metadata, after);
      const now = () => store.list({ teamId, metadata: metadata && [metadata], after, limit: 51 });
      out[name] = { old: await sample(REQUESTS, old), new: await sample(REQUESTS, now) };
    }
  } finally {
    await db.schema.dropIndex('sandbox_metadata_kv').execute();
  }
  return out;
}

const cluster = await PostgresCluster.start();
const servers: ServerProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
try {
  const database = await createDatabase(cluster.adminUrl);
  const pgServer = await ServerProcess.start({ ...ENV, SANDPIT_DATABASE_URL: database.url });
  servers.push(pgServer);
  const liteServer = await ServerProcess.start(ENV);
  servers.push(liteServer);

  const pgDb = await openDb({ dataDir: pgServer.dataDir, databaseUrl: database.url });
  cleanups.push(async () => {
    await empty(pgDb);
    await pgDb.destroy();
  });
  const liteDb = await openDb({ dataDir: liteServer.dataDir });
  cleanups.push(async () => {
    await empty(liteDb);
    await liteDb.destroy();
  });

  console.log(`rows: ${ROWS} sandboxes in ${GROUPS} metadata groups (${ROWS / GROUPS} per group), requests per case: ${REQUESTS}`);
  console.log(`fill PostgreSQL: ${((await fill(pgDb)) / 1000).toFixed(1)} s; SQLite: ${((await fill(liteDb)) / 1000).toFixed(1)} s`);
  // What autovacuum would have done by now on a store that grew to this size.
  await sql`vacuum analyze`.execute(pgDb);
  await sql`analyze`.execute(liteDb);

  const line = (store: string, xs: number[]) => `  ${store.padEnd(16)} median ${median(xs).toFixed(2).padStart(7)} ms   p99 ${percentile(xs, 99).toFixed(2).padStart(7)} ms`;
  const results = { PostgreSQL: await measure('PostgreSQL', pgServer), SQLite: await measure('SQLite', liteServer) };
  for (const name of Object.keys(results.PostgreSQL)) {
    const p = results.PostgreSQL[name]!;
    const s = results.SQLite[name]!;
    console.log(`GET /sandboxes, ${name}`);
    console.log(line('PostgreSQL', p));
    console.log(line('SQLite', s));
    console.log(`  PostgreSQL / SQLite median ${(median(p) / median(s)).toFixed(2)}x   (goal: p99 <= 20 ms)`);
  }
  const queries = { PostgreSQL: await measureQueries(pgDb), SQLite: await measureQueries(liteDb) };
  for (const name of Object.keys(queries.PostgreSQL)) {
    console.log(`list query alone, ${name}`);
    for (const [store, byCase] of Object.entries(queries)) {
      const { old, new: now } = byCase[name]!;
      console.log(line(`${store} old`, old));
      console.log(line(`${store} new`, now));
      console.log(`  ${store} new / old median ${(median(now) / median(old)).toFixed(2)}x`);
    }
  }
} catch (err) {
  // What the servers said explains a failed request better than the client's error.
  for (const s of servers) console.error(s.output.slice(-4000));
  throw err;
} finally {
  for (const c of cleanups) await c().catch((err) => console.error(`cleanup: ${String(err)}`));
  for (const s of servers.toReversed()) {
    await s.stop().catch((err) => {
      console.error(`stopping a server: ${String(err)}\n${s.output.slice(-4000)}`);
    });
  }
  await cluster.stop();
}
