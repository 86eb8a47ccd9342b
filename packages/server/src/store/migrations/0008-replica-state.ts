import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * State that API replicas must agree on, kept in the store: leases (one holder at a time runs a
 * timer) and claims on a team's active-sandbox slots while a create or resume is in flight.
 */
export const replicaState: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('leases')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('active_slot_claims')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('active_slot_claims_team').on('active_slot_claims').columns(['team_id', 'expires_at']).execute();
  },
};
