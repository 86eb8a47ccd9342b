import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** A template version's engine capture (gvisor): sandboxes of it are restored from it instead of booting. */
export const templateCaptures: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('templates').addColumn('capture', 'text').execute();
  },
};
