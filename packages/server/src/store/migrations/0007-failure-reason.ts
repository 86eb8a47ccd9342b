import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Why a sandbox failed (engine_exited, engine_out_of_memory, ...): machine-readable, shown on the sandbox. */
export const failureReason: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('sandboxes').addColumn('failure_reason', 'text').execute();
  },
};
