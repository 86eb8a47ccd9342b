import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { addSerialKey } from './portable.ts';
import { grantToKeyManagers } from './0017-audit-log.ts';

/**
 * Webhooks: a team's endpoints, and the outbox of deliveries to them. Lifecycle events are read from
 * their logs by cursor (sandbox_events, and resource_events for snapshots and templates); each
 * event's resource is kept as the API showed it then. Cursors start at the logs' ends: history is
 * not delivered. Keys that could manage keys get `webhooks:manage`.
 */
export const webhooks: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('sandbox_events').addColumn('resource', 'text').execute();
    await db.schema
      .createTable('resource_events')
      .$call((t) => addSerialKey(t, db, 'seq'))
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('resource_type', 'text', (c) => c.notNull())
      .addColumn('resource_id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('ordering_key', 'text', (c) => c.notNull())
      .addColumn('resource', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('webhooks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('events', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('active', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhooks_team').on('webhooks').columns(['team_id', 'created_at']).execute();
    await db.schema
      .createTable('webhook_deliveries')
      .$call((t) => addSerialKey(t, db, 'n'))
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('webhook_id', 'text', (c) => c.notNull())
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('ordering_key', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('last_status_code', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('attempt_log', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('delivered_at', 'bigint')
      .execute();
    await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
    await db.schema.createIndex('webhook_deliveries_order').on('webhook_deliveries').columns(['webhook_id', 'ordering_key', 'status', 'n']).execute();
    await db.schema.createIndex('webhook_deliveries_list').on('webhook_deliveries').columns(['webhook_id', 'created_at', 'id']).execute();
    await db.schema
      .createTable('event_cursors')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .execute();
    for (const log of ['sandbox_events', 'resource_events']) {
      const row = await db
        .selectFrom(log)
        .select((eb) => eb.fn.max('seq').as('seq'))
        .executeTakeFirst();
      await db
        .insertInto('event_cursors')
        .values({ name: `webhooks:${log}`, seq: Number(row?.seq ?? 0) })
        .execute();
    }
    await grantToKeyManagers(db, 'webhooks:manage');
  },
};
