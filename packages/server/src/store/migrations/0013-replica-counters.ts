import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { dialectOf } from '../dialect.ts';

/**
 * Counters API replicas share: request counts per rate-limit key, and snapshot creations admitted
 * but not yet stored (the per-team in-flight cap). On PostgreSQL the rate-limit table is unlogged:
 * it takes a write per request, and losing the counts of the current window in a crash is harmless.
 */
export const replicaCounters: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('rate_limits')
      .$call((b) => (dialectOf(db) === 'postgres' ? b.modifyFront(sql`unlogged`) : b))
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('window_start', 'bigint', (c) => c.notNull())
      .addColumn('hits', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('rate_limits_window').on('rate_limits').column('window_start').execute();
    await db.schema
      .createTable('snapshot_reservations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('snapshot_reservations_team').on('snapshot_reservations').columns(['team_id', 'expires_at']).execute();
  },
};
