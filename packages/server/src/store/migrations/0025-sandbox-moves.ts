import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { grantToKeyManagers } from './0017-audit-log.ts';

/** Moving a sandbox between nodes (`POST /sandboxes/{id}/migrate`) is for owners and admins: their keys get `sandboxes:move`. */
export const sandboxMoves: Migration = {
  async up(db: Kysely<any>) {
    await grantToKeyManagers(db, 'sandboxes:move');
  },
};
