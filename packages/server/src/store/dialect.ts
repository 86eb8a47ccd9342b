import { type Kysely, PostgresAdapter } from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

/**
 * Which engine a handle (or a transaction of it) talks to, for the few statements the two
 * write differently: serial keys in migrations and row locks. Kysely exposes the adapter only
 * through its executor.
 */
export function dialectOf<DB>(db: Kysely<DB>): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}
