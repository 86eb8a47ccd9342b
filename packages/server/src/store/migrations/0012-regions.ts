import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Regions: each API replica announces where it serves its region, so every region can forward to every other. */
export const regions: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('region_endpoints')
      .addColumn('url', 'text', (c) => c.primaryKey())
      .addColumn('region', 'text', (c) => c.notNull())
      .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
