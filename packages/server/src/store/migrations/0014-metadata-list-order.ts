import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * A metadata filter lists a team's matching sandboxes newest first. Through the (key, value) index
 * every match was read and sorted for one page (1,000 matches: 5,000 buffer reads on PostgreSQL;
 * all of them for a value most sandboxes share). The rows now carry their sandbox's team and
 * creation time, and exist only while the sandbox does, so an index in list order yields a page by
 * reading that page. See bench/store.bench.ts.
 */
export const metadataListOrder: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('sandbox_metadata')
      .addColumn('team_id', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    await db.schema
      .alterTable('sandbox_metadata')
      .addColumn('created_at', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    await db
      .deleteFrom('sandbox_metadata')
      .where('sandbox_id', 'in', db.selectFrom('sandboxes').select('id').where('deleted_at', 'is not', null))
      .execute();
    await db
      .updateTable('sandbox_metadata')
      .set({
        team_id: sql`(select team_id from sandboxes where sandboxes.id = sandbox_metadata.sandbox_id)`,
        created_at: sql`(select created_at from sandboxes where sandboxes.id = sandbox_metadata.sandbox_id)`,
      })
      .execute();
    await db.schema.dropIndex('sandbox_metadata_kv').execute();
    await db.schema.createIndex('sandbox_metadata_list').on('sandbox_metadata').columns(['team_id', 'key', 'value', 'created_at desc', 'sandbox_id desc']).execute();
  },
};
