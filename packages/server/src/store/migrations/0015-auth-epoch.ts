import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * One counter row, bumped in the same transaction as every change that narrows or ends what a key
 * may do (key revoked, member deactivated, role granted or revoked, console sign-out). API replicas
 * cache principals and poll this row to learn when their caches went stale.
 */
export const authEpoch: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('auth_epoch')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('epoch', 'bigint', (c) => c.notNull())
      .execute();
    await db.insertInto('auth_epoch').values({ id: 1, epoch: 0 }).execute();
  },
};
