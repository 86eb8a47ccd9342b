import { createDatabase } from '../../src/local-cluster/postgres.ts';

export { createDatabase, PostgresCluster } from '../../src/local-cluster/postgres.ts';

/** Tests run against the cluster this names (set by the PostgreSQL pass of the suite); unset means SQLite. */
export const TEST_POSTGRES_ENV = 'SANDPIT_TEST_POSTGRES';

/** A database for one test server when the suite runs against PostgreSQL, else undefined (SQLite). */
export async function testDatabase(): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  const admin = process.env[TEST_POSTGRES_ENV];
  return admin ? createDatabase(admin) : undefined;
}
