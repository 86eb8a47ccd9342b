import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type Dialect, Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { migrationProvider } from './migrations.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;

export interface StoreConfig {
  dataDir: string;
  /** postgres://... selects PostgreSQL; unset keeps the embedded SQLite file in the data directory. */
  databaseUrl?: string;
}

/** Opens (creating if needed) the store and migrates it. */
export async function openDb(cfg: StoreConfig): Promise<Db> {
  const db = new Kysely<Database>({ dialect: cfg.databaseUrl ? postgresDialect(cfg.databaseUrl) : sqliteDialect(cfg.dataDir) });
  const { error, results } = await new Migrator({ db, provider: migrationProvider }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    await db.destroy();
    throw new Error(`database migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`);
  }
  return db;
}

function sqliteDialect(dataDir: string): Dialect {
  mkdirSync(dataDir, { recursive: true });
  const sqlite = new BetterSqlite3(join(dataDir, 'sandpit.db'));
  // WAL keeps readers off the writer's back; a process crash never loses a committed row.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  return new SqliteDialect({ database: withStatementCache(sqlite) });
}

// Times are epoch milliseconds in bigint columns: far inside the exact range of a JS number.
const INT8_OID = 20;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  },
};

/**
 * A client that always has an 'error' listener. pg emits a dead socket's error (EPIPE, ECONNRESET: a
 * server stopping) on the client as well as failing its queries, and the pool listens only while a
 * client is idle: one checked out for a query, or still connecting, would crash the process. The
 * queries and connects that error are failed and answered through their own promises.
 */
class ListenedClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', () => undefined);
  }
}

function postgresDialect(url: string): Dialect {
  // Our queries are short pages and point reads: starting parallel workers cost more than the work
  // (15 ms of a 19 ms filtered page over 100,000 rows), so this pool's sessions run each query alone.
  // A connect that gets no answer (a server between stop and start) fails after 5 s instead of holding its caller forever.
  const pool = new pg.Pool({ Client: ListenedClient, connectionString: url, types, max: 10, connectionTimeoutMillis: 5000, options: '-c max_parallel_workers_per_gather=0' });
  // An idle client losing its server (a PostgreSQL restart) must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return new PostgresDialect({ pool });
}

const STATEMENT_CACHE_MAX = 1000;

/**
 * Kysely prepares every query afresh; preparing was the largest single cost of a GET.
 * Statements are reused by SQL text (SQLite re-prepares them itself after a schema change).
 */
function withStatementCache(sqlite: BetterSqlite3.Database) {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (!stmt) {
        if (cache.size >= STATEMENT_CACHE_MAX) cache.clear();
        stmt = sqlite.prepare(sql);
        cache.set(sql, stmt);
      }
      return stmt;
    },
    close() {
      sqlite.close();
    },
  };
}
