/**
 * Issue 12: `GET /sandboxes` over 100,000 sandbox rows, PostgreSQL next to SQLite in the same run.
 * Each store gets a real server process; the rows are written straight into its store (they have
 * no engine sandbox behind them, and are removed the same way before the server stops). Timed:
 * the first page with a metadata filter, a page deep in the filtered list by cursor, and an
 * unfiltered first page. Goal (issue 12): p99 <= 20 ms per page on PostgreSQL.
 * Run: node bench/store.bench.ts   (BENCH_ROWS, default 100000; BENCH_REQUESTS per case, default 300)
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
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
      for (const [key, value] of Object.entries(meta)) metadata.push({ sandbox_id: id, key, value });
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
  // Walk 10 pages into the filtered list for a cursor that is not at the top.
  let cursor = '';
  for (let i = 0; i < 10; i++) {
    const next = (await api.get(`${filtered}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body.next_cursor;
    if (!next) break;
    cursor = next;
  }
  const check = await api.get(filtered);
  if (check.status !== 200 || check.body.sandboxes.length !== Math.min(50, ROWS / GROUPS)) throw new Error(`${label}: unexpected first page ${check.status}`);
  const get = (path: string) => async () => {
    const res = await api.get(path);
    if (res.status !== 200) throw new Error(`${label}: ${path} -> ${res.status}`);
  };
  return {
    'first page, metadata filter': await sample(REQUESTS, get(filtered)),
    'page 11 by cursor, metadata filter': await sample(REQUESTS, get(`${filtered}&cursor=${encodeURIComponent(cursor)}`)),
    'first page, no filter': await sample(REQUESTS, get('/sandboxes?limit=50')),
  };
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

  const pgDb = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 2 }) }) });
  cleanups.push(async () => {
    await empty(pgDb);
    await pgDb.destroy();
  });
  const lite = new BetterSqlite3(join(liteServer.dataDir, 'sandpit.db'));
  lite.pragma('busy_timeout = 5000');
  const liteDb = new Kysely<any>({ dialect: new SqliteDialect({ database: lite }) });
  cleanups.push(async () => {
    await empty(liteDb);
    await liteDb.destroy();
  });

  console.log(`rows: ${ROWS} sandboxes in ${GROUPS} metadata groups (${ROWS / GROUPS} per group), requests per case: ${REQUESTS}`);
  console.log(`fill PostgreSQL: ${((await fill(pgDb)) / 1000).toFixed(1)} s; SQLite: ${((await fill(liteDb)) / 1000).toFixed(1)} s`);
  // What autovacuum would have done by now on a store that grew to this size.
  await sql`analyze`.execute(pgDb);
  await sql`analyze`.execute(liteDb);

  const results = { PostgreSQL: await measure('PostgreSQL', pgServer), SQLite: await measure('SQLite', liteServer) };
  for (const name of Object.keys(results.PostgreSQL)) {
    const p = results.PostgreSQL[name]!;
    const s = results.SQLite[name]!;
    const line = (store: string, xs: number[]) => `  ${store.padEnd(11)} median ${median(xs).toFixed(2).padStart(7)} ms   p99 ${percentile(xs, 99).toFixed(2).padStart(7)} ms`;
    console.log(`GET /sandboxes, ${name}`);
    console.log(line('PostgreSQL', p));
    console.log(line('SQLite', s));
    console.log(`  PostgreSQL / SQLite median ${(median(p) / median(s)).toFixed(2)}x   (goal: p99 <= 20 ms)`);
  }
} finally {
  for (const c of cleanups) await c().catch((err) => console.error(`cleanup: ${String(err)}`));
  for (const s of servers.toReversed()) await s.stop();
  await cluster.stop();
}
