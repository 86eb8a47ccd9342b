import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** A pause that keeps only the disk (resume boots afresh): what an auto-pause takes, and what the current pause took. Null: memory kept. */
export const diskOnlyPause: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('sandboxes').addColumn('auto_pause_disk_only', 'integer').execute();
    await db.schema.alterTable('sandboxes').addColumn('paused_disk_only', 'integer').execute();
  },
};
