import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** User metadata on a sandbox's files (E2B's `X-Metadata-*` uploads), by path: gVisor's root filesystem keeps no user xattrs. */
export const fileMetadata: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('file_metadata')
      .addColumn('sandbox_id', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('file_metadata_pk', ['sandbox_id', 'path'])
      .execute();
  },
};
