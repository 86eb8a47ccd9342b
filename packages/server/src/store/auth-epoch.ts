import type { Db } from './db.ts';

/**
 * Marks the principals cached by every API replica stale. Call it in the transaction of the change
 * (or after it commits), never before: a replica that sees the new epoch re-reads keys and roles.
 */
export async function bumpAuthEpoch(db: Db): Promise<void> {
  await db
    .updateTable('auth_epoch')
    .set((eb) => ({ epoch: eb('epoch', '+', 1) }))
    .where('id', '=', 1)
    .execute();
}

export async function readAuthEpoch(db: Db): Promise<number> {
  const row = await db.selectFrom('auth_epoch').select('epoch').where('id', '=', 1).executeTakeFirstOrThrow();
  return Number(row.epoch);
}
