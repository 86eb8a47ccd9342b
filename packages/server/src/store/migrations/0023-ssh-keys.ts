import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Team SSH public keys: any of them logs in to any sandbox of its team through the SSH gateway. */
export const sshKeys: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('ssh_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('algorithm', 'text', (c) => c.notNull())
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('ssh_keys_team_fingerprint').on('ssh_keys').columns(['team_id', 'fingerprint']).unique().execute();
  },
};
