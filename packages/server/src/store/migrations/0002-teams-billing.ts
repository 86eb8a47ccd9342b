import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { addSerialKey } from './portable.ts';

/**
 * Roles and their assignments, per-team rollout gates, pricing plans, credits, billing
 * periods and the metering ledger. Existing teams get an owner assignment for their
 * earliest member, a billing account on the default plan and its trial credit.
 */
export const teamsBilling: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('role_assignments')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('role_name', 'text', (c) => c.notNull())
      .addColumn('scope_type', 'text', (c) => c.notNull())
      .addColumn('granted_by', 'text', (c) => c.notNull())
      .addColumn('granted_at', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema.createIndex('role_assignments_team').on('role_assignments').columns(['team_id', 'user_id']).execute();

    await db.schema
      .createTable('team_gates')
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
      .addColumn('gate', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('team_gates_pk', ['team_id', 'gate'])
      .execute();

    // Rates are USD per hour of one vCPU, one GiB of memory, one GiB of storage.
    await db.schema
      .createTable('pricing_plans')
      .addColumn('plan_key', 'text', (c) => c.primaryKey())
      .addColumn('plan_name', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('vcpu_hour_usd', 'double precision', (c) => c.notNull())
      .addColumn('memory_gib_hour_usd', 'double precision', (c) => c.notNull())
      .addColumn('storage_gib_hour_usd', 'double precision', (c) => c.notNull())
      .addColumn('trial_grant_usd', 'double precision', (c) => c.notNull())
      .addColumn('is_default', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('billing_accounts')
      .addColumn('team_id', 'text', (c) => c.primaryKey().references('teams.id'))
      .addColumn('plan_key', 'text', (c) => c.notNull().references('pricing_plans.plan_key'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('billing_credits')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('amount_usd', 'double precision', (c) => c.notNull())
      .addColumn('granted_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('billing_credits_team').on('billing_credits').column('team_id').execute();

    await db.schema
      .createTable('billing_periods')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
      .addColumn('period_start', 'bigint', (c) => c.notNull())
      .addColumn('period_end', 'bigint', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('plan_key', 'text', (c) => c.notNull())
      .addColumn('vcpu_seconds', 'double precision')
      .addColumn('memory_mib_seconds', 'double precision')
      .addColumn('storage_mib_seconds', 'double precision')
      .addColumn('charges_usd', 'double precision')
      .addColumn('credits_applied_usd', 'double precision')
      .addColumn('finalized_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('billing_periods_team_start', ['team_id', 'period_start'])
      .execute();

    // Metering ledger: a quantity (vCPUs, MiB of memory, bytes of storage) held over [start_at, end_at).
    // An open segment (end_at null) keeps accruing, also across a server restart.
    await db.schema
      .createTable('meter_segments')
      .$call((t) => addSerialKey(t, db, 'id'))
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('subject_kind', 'text', (c) => c.notNull())
      .addColumn('subject_id', 'text', (c) => c.notNull())
      .addColumn('resource', 'text', (c) => c.notNull())
      .addColumn('quantity', 'double precision', (c) => c.notNull())
      .addColumn('start_at', 'bigint', (c) => c.notNull())
      .addColumn('end_at', 'bigint')
      .execute();
    await db.schema.createIndex('meter_segments_team').on('meter_segments').columns(['team_id', 'start_at']).execute();
    await db.schema.createIndex('meter_segments_subject').on('meter_segments').columns(['subject_id', 'resource', 'end_at']).execute();

    // How far the metering has read the sandbox_events log; advanced in the same transaction as the ledger.
    await db.schema
      .createTable('meter_cursors')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .execute();

    const now = Date.now();
    await db
      .insertInto('pricing_plans')
      .values({
        plan_key: 'standard',
        plan_name: 'Standard',
        currency: 'USD',
        vcpu_hour_usd: 0.0504,
        memory_gib_hour_usd: 0.0162,
        storage_gib_hour_usd: 0.00014,
        trial_grant_usd: 100,
        is_default: 1,
        created_at: now,
      })
      .execute();

    // Each existing team's earliest active member becomes its owner.
    const users = await db.selectFrom('users').select(['id', 'team_id', 'created_at']).where('status', '=', 'active').orderBy('created_at').orderBy('id').execute();
    const owned = new Set<string>();
    for (const u of users) {
      if (owned.has(u.team_id)) continue;
      owned.add(u.team_id);
      await db
        .insertInto('role_assignments')
        .values({
          id: randomUUID(),
          team_id: u.team_id,
          user_id: u.id,
          role_name: 'owner',
          scope_type: 'team',
          granted_by: u.id,
          granted_at: u.created_at,
          created_at: now,
          updated_at: now,
          revoked_at: null,
        })
        .execute();
    }
  },
};
