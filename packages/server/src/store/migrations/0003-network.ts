import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Secrets (encrypted values, soft-deleted), their bindings to sandboxes, and published preview ports. */
export const network: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('secrets')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('ciphertext', 'text', (c) => c.notNull())
      .addColumn('allowed_hosts', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .execute();
    // One live secret per name; revoked rows stay for audit and free the name.
    await db.schema.createIndex('secrets_live_name').on('secrets').columns(['team_id', 'name']).unique().where(sql.ref('revoked_at'), 'is', null).execute();
    await db.schema
      .createTable('secret_bindings')
      .addColumn('sandbox_id', 'text', (c) => c.notNull())
      .addColumn('env', 'text', (c) => c.notNull())
      .addColumn('secret_id', 'text', (c) => c.notNull().references('secrets.id'))
      .addColumn('token', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('secret_bindings_pk', ['sandbox_id', 'env'])
      .execute();
    await db.schema
      .createTable('preview_ports')
      .addColumn('sandbox_id', 'text', (c) => c.notNull())
      .addColumn('port', 'integer', (c) => c.notNull())
      .addColumn('access', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('preview_ports_pk', ['sandbox_id', 'port'])
      .execute();
  },
};
