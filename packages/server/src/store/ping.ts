import { sql } from 'kysely';
import type { Db } from './db.ts';

/** One round trip to the store; rejects when it is not reachable. */
export async function pingStore(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
