import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** When a sandbox last moved off a node (drain): API replicas drop their cached "sandbox -> this node" entries when it changes. */
export const nodeMoves: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('nodes').addColumn('moved_out_at', 'bigint').execute();
  },
};
