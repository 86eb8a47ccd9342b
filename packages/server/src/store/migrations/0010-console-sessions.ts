import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Console sign-ins: a session cookie stands for one API key; only the cookie's hash is kept. */
export const consoleSessions: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('console_sessions')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('console_sessions_key').on('console_sessions').column('key_id').execute();
  },
};
