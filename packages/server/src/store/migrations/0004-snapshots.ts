import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Memory+disk snapshots. Rows are soft-deleted so a replayed idempotency key can answer 410. */
export const snapshots: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('snapshots')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
      .addColumn('sandbox_id', 'text', (c) => c.notNull())
      .addColumn('template_id', 'text')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('size_bytes', 'bigint', (c) => c.notNull())
      .addColumn('resources', 'text', (c) => c.notNull())
      .addColumn('env', 'text', (c) => c.notNull())
      .addColumn('idempotency_key', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('ready_at', 'bigint')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('deleted_at', 'bigint')
      .execute();
    await db.schema.createIndex('snapshots_idempotency').on('snapshots').columns(['sandbox_id', 'idempotency_key']).unique().where(sql.ref('idempotency_key'), 'is not', null).execute();
    await db.schema.createIndex('snapshots_team_list').on('snapshots').columns(['team_id', 'deleted_at', 'created_at', 'id']).execute();
  },
};
