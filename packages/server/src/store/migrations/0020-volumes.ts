import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Volumes (a team's disks that outlive sandboxes) and which sandboxes mount them. A mount row stays
 * with its sandbox: it counts as mounted while that sandbox is not deleted (or not yet recorded).
 */
export const volumes: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('volumes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('size_mib', 'bigint', (c) => c.notNull())
      .addColumn('node_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('volumes_team_name').on('volumes').columns(['team_id', 'name']).unique().execute();
    await db.schema.createIndex('volumes_team_list').on('volumes').columns(['team_id', 'created_at', 'id']).execute();
    await db.schema
      .createTable('volume_mounts')
      .addColumn('sandbox_id', 'text', (c) => c.notNull())
      .addColumn('volume_id', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('read_only', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('volume_mounts_pk', ['sandbox_id', 'path'])
      .execute();
    await db.schema.createIndex('volume_mounts_volume').on('volume_mounts').columns(['volume_id']).execute();
  },
};
