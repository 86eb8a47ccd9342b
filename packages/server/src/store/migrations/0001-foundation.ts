import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { addSerialKey } from './portable.ts';

/** Teams, users, API keys, sandboxes, their metadata index and lifecycle events. */
export const foundation: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('teams')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('limits', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('full_name', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('key_prefix', 'text', (c) => c.notNull())
      .addColumn('permissions', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema
      .createTable('sandboxes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
      .addColumn('name', 'text')
      .addColumn('template_id', 'text', (c) => c.notNull())
      .addColumn('driver', 'text', (c) => c.notNull())
      .addColumn('region', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('env', 'text', (c) => c.notNull())
      .addColumn('network', 'text')
      .addColumn('secrets', 'text', (c) => c.notNull())
      .addColumn('preview_access', 'text', (c) => c.notNull())
      .addColumn('resources', 'text', (c) => c.notNull())
      .addColumn('access_token', 'text', (c) => c.notNull())
      .addColumn('auto_pause_seconds', 'integer')
      .addColumn('auto_delete_seconds', 'integer')
      .addColumn('auto_pause_at', 'bigint')
      .addColumn('auto_delete_at', 'bigint')
      .addColumn('active_since', 'bigint')
      .addColumn('paused_at', 'bigint')
      .addColumn('latest_snapshot_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('deleted_at', 'bigint')
      .execute();
    await db.schema.createIndex('sandboxes_team_list').on('sandboxes').columns(['team_id', 'deleted_at', 'created_at', 'id']).execute();
    await db.schema.createIndex('sandboxes_auto_pause').on('sandboxes').column('auto_pause_at').execute();
    await db.schema.createIndex('sandboxes_auto_delete').on('sandboxes').column('auto_delete_at').execute();
    await db.schema
      .createTable('sandbox_metadata')
      .addColumn('sandbox_id', 'text', (c) => c.notNull().references('sandboxes.id'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('sandbox_metadata_pk', ['sandbox_id', 'key'])
      .execute();
    await db.schema.createIndex('sandbox_metadata_kv').on('sandbox_metadata').columns(['key', 'value']).execute();
    await db.schema
      .createTable('sandbox_events')
      .$call((t) => addSerialKey(t, db, 'seq'))
      .addColumn('sandbox_id', 'text', (c) => c.notNull())
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('data', 'text')
      .execute();
    await db.schema.createIndex('sandbox_events_sandbox').on('sandbox_events').columns(['sandbox_id', 'seq']).execute();
  },
};
