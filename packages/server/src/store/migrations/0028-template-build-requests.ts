import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Builds asked for before their steps arrive (E2B's `POST /v3/templates`): kept in the store so a
 * restart, or the next request landing on another API replica, still finds them.
 */
export const templateBuildRequests: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('template_build_requests')
      .addColumn('build_id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('template_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      // JSON array of the tags the build is to get once ready.
      .addColumn('tags', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('template_build_requests_team_name').on('template_build_requests').columns(['team_id', 'name']).execute();
  },
};
