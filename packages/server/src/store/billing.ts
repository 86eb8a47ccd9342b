import type { Selectable } from 'kysely';
import type { Db } from './db.ts';
import type { BillingPeriodTable, PricingPlanTable } from './schema.ts';

export type MeterResource = 'vcpu' | 'memory' | 'storage';

export interface PlanRecord {
  planKey: string;
  planName: string;
  currency: string;
  vcpuHourUsd: number;
  memoryGibHourUsd: number;
  storageGibHourUsd: number;
  trialGrantUsd: number;
}

export type PeriodStatus = 'open' | 'finalized';

export interface PeriodRecord {
  id: string;
  teamId: string;
  start: number;
  end: number;
  status: PeriodStatus;
  planKey: string;
  /** Frozen when finalized; null while open. */
  totals: { vcpuSeconds: number; memoryMibSeconds: number; storageMibSeconds: number; chargesUsd: number; creditsAppliedUsd: number } | null;
  finalizedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface SegmentRecord {
  subjectKind: string;
  subjectId: string;
  resource: MeterResource;
  quantity: number;
  start: number;
  end: number | null;
}

/** A lifecycle event joined with what metering needs of its sandbox. */
export interface MeterEvent {
  seq: number;
  sandboxId: string;
  teamId: string;
  type: string;
  at: number;
  resources: { vcpu_count: number; memory_mib: number };
}

const planFromRow = (r: Selectable<PricingPlanTable>): PlanRecord => ({
  planKey: r.plan_key,
  planName: r.plan_name,
  currency: r.currency,
  vcpuHourUsd: Number(r.vcpu_hour_usd),
  memoryGibHourUsd: Number(r.memory_gib_hour_usd),
  storageGibHourUsd: Number(r.storage_gib_hour_usd),
  trialGrantUsd: Number(r.trial_grant_usd),
});

function periodFromRow(r: Selectable<BillingPeriodTable>): PeriodRecord {
  return {
    id: r.id,
    teamId: r.team_id,
    start: Number(r.period_start),
    end: Number(r.period_end),
    status: r.status as PeriodStatus,
    planKey: r.plan_key,
    totals:
      r.status === 'finalized'
        ? {
            vcpuSeconds: Number(r.vcpu_seconds),
            memoryMibSeconds: Number(r.memory_mib_seconds),
            storageMibSeconds: Number(r.storage_mib_seconds),
            chargesUsd: Number(r.charges_usd),
            creditsAppliedUsd: Number(r.credits_applied_usd),
          }
        : null,
    finalizedAt: r.finalized_at === null ? null : Number(r.finalized_at),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** Plans, billing accounts, credits and periods. */
export class BillingStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async teamIds(): Promise<string[]> {
    return (await this.db.selectFrom('teams').select('id').execute()).map((r) => r.id);
  }

  /** The team's plan; null when the team has no billing account yet. */
  async planOf(teamId: string): Promise<PlanRecord | null> {
    const row = await this.db
      .selectFrom('billing_accounts')
      .innerJoin('pricing_plans', 'pricing_plans.plan_key', 'billing_accounts.plan_key')
      .selectAll('pricing_plans')
      .where('billing_accounts.team_id', '=', teamId)
      .executeTakeFirst();
    return row ? planFromRow(row) : null;
  }

  /**
   * Opens the team's billing account on the default plan with the plan's trial credit and the
   * first period, atomically; a no-op when the account exists.
   */
  async openAccount(a: { teamId: string; creditId: string; period: { id: string; start: number; end: number }; now: number }): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const exists = await tx.selectFrom('billing_accounts').select('team_id').where('team_id', '=', a.teamId).executeTakeFirst();
      if (exists) return;
      const plan = await tx.selectFrom('pricing_plans').selectAll().where('is_default', '=', 1).orderBy('plan_key').executeTakeFirstOrThrow();
      await tx.insertInto('billing_accounts').values({ team_id: a.teamId, plan_key: plan.plan_key, created_at: a.now, updated_at: a.now }).execute();
      if (Number(plan.trial_grant_usd) > 0) {
        await tx
          .insertInto('billing_credits')
          .values({ id: a.creditId, team_id: a.teamId, source: 'local_trial', amount_usd: Number(plan.trial_grant_usd), granted_at: a.now })
          .execute();
      }
      await tx
        .insertInto('billing_periods')
        .values({ ...emptyPeriod(a.teamId, a.period, plan.plan_key, a.now) })
        .onConflict((oc) => oc.columns(['team_id', 'period_start']).doNothing())
        .execute();
    });
  }

  /** Credits granted to the team, by source. */
  async credits(teamId: string): Promise<{ source: string; amountUsd: number }[]> {
    const rows = await this.db.selectFrom('billing_credits').select(['source', 'amount_usd']).where('team_id', '=', teamId).execute();
    return rows.map((r) => ({ source: r.source, amountUsd: Number(r.amount_usd) }));
  }

  /** Newest first. */
  async periods(teamId: string): Promise<PeriodRecord[]> {
    const rows = await this.db.selectFrom('billing_periods').selectAll().where('team_id', '=', teamId).orderBy('period_start', 'desc').execute();
    return rows.map(periodFromRow);
  }

  async openPeriod(teamId: string): Promise<PeriodRecord | undefined> {
    const row = await this.db.selectFrom('billing_periods').selectAll().where('team_id', '=', teamId).where('status', '=', 'open').executeTakeFirst();
    return row && periodFromRow(row);
  }

  /** Freezes the open period's totals and opens the one after it, atomically (once: the open check guards a rerun). */
  async finalize(period: PeriodRecord, totals: NonNullable<PeriodRecord['totals']>, next: { id: string; start: number; end: number; planKey: string }, now: number): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const res = await tx
        .updateTable('billing_periods')
        .set({
          status: 'finalized',
          vcpu_seconds: totals.vcpuSeconds,
          memory_mib_seconds: totals.memoryMibSeconds,
          storage_mib_seconds: totals.storageMibSeconds,
          charges_usd: totals.chargesUsd,
          credits_applied_usd: totals.creditsAppliedUsd,
          finalized_at: now,
          updated_at: now,
        })
        .where('id', '=', period.id)
        .where('status', '=', 'open')
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return;
      await tx
        .insertInto('billing_periods')
        .values(emptyPeriod(period.teamId, next, next.planKey, now))
        .execute();
    });
  }

  /** Segments of the team overlapping [from, to). */
  async segments(teamId: string, from: number, to: number): Promise<SegmentRecord[]> {
    const rows = await this.db
      .selectFrom('meter_segments')
      .select(['subject_kind', 'subject_id', 'resource', 'quantity', 'start_at', 'end_at'])
      .where('team_id', '=', teamId)
      .where('start_at', '<', to)
      .where((eb) => eb.or([eb('end_at', 'is', null), eb('end_at', '>', from)]))
      .execute();
    return rows.map((r) => ({
      subjectKind: r.subject_kind,
      subjectId: r.subject_id,
      resource: r.resource as MeterResource,
      quantity: Number(r.quantity),
      start: Number(r.start_at),
      end: r.end_at === null ? null : Number(r.end_at),
    }));
  }

  /** Which of these subjects are volumes (metered apart from sandboxes). */
  async volumeSubjects(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('meter_segments').select('subject_id').distinct().where('subject_kind', '=', VOLUME).where('subject_id', 'in', ids).execute();
    return new Set(rows.map((r) => r.subject_id));
  }

  /** The sandbox each snapshot was taken from. */
  async snapshotSources(ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('snapshots').select(['id', 'sandbox_id']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, r.sandbox_id]));
  }

  /** Name and region of sandboxes, deleted ones included, for usage reports. */
  async sandboxLabels(ids: string[]): Promise<Map<string, { name: string | null; region: string; deleted: boolean }>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('sandboxes').select(['id', 'name', 'region', 'deleted_at']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, { name: r.name, region: r.region, deleted: r.deleted_at !== null }]));
  }
}

function emptyPeriod(teamId: string, p: { id: string; start: number; end: number }, planKey: string, now: number) {
  return {
    id: p.id,
    team_id: teamId,
    period_start: p.start,
    period_end: p.end,
    status: 'open',
    plan_key: planKey,
    vcpu_seconds: null,
    memory_mib_seconds: null,
    storage_mib_seconds: null,
    charges_usd: null,
    credits_applied_usd: null,
    finalized_at: null,
    created_at: now,
    updated_at: now,
  };
}

/** The metering ledger and its read position in the sandbox_events log. */
export class MeterStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Events after the cursor, oldest first. */
  async pendingEvents(limit: number): Promise<MeterEvent[]> {
    const cursor = await this.db.selectFrom('meter_cursors').select('seq').where('name', '=', EVENTS_CURSOR).executeTakeFirst();
    const rows = await this.db
      .selectFrom('sandbox_events')
      .innerJoin('sandboxes', 'sandboxes.id', 'sandbox_events.sandbox_id')
      .select(['sandbox_events.seq', 'sandbox_events.sandbox_id', 'sandbox_events.team_id', 'sandbox_events.type', 'sandbox_events.at', 'sandboxes.resources'])
      .where('sandbox_events.seq', '>', cursor ? Number(cursor.seq) : 0)
      .orderBy('sandbox_events.seq')
      .limit(limit)
      .execute();
    return rows.map((r) => {
      const res = JSON.parse(r.resources) as { vcpu_count: number; memory_mib: number };
      return { seq: Number(r.seq), sandboxId: r.sandbox_id, teamId: r.team_id, type: r.type, at: Number(r.at), resources: res };
    });
  }

  /**
   * Applies a batch of ledger changes and moves the cursor past `lastSeq` in one transaction,
   * so each event is metered exactly once whatever crashes when. The cursor moves first and only
   * from below `firstSeq`: a batch another API replica already applied is dropped (false).
   */
  async apply(changes: LedgerChange[], firstSeq: number, lastSeq: number): Promise<boolean> {
    try {
      await this.db.transaction().execute(async (tx) => {
        const moved = await tx
          .insertInto('meter_cursors')
          .values({ name: EVENTS_CURSOR, seq: lastSeq })
          .onConflict((oc) => oc.column('name').doUpdateSet({ seq: lastSeq }).where('meter_cursors.seq', '<', firstSeq))
          .returning('seq')
          .executeTakeFirst();
        if (!moved) throw new StaleBatch();
        for (const c of changes) await applyChange(tx, c);
      });
      return true;
    } catch (err) {
      if (err instanceof StaleBatch) return false;
      throw err;
    }
  }

  /**
   * Snapshot storage follows the snapshots table: a snapshot holds its size from ready_at until
   * deleted_at. Derived from that state, so rerunning after a crash changes nothing.
   */
  async syncSnapshots(): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const fresh = await tx
        .selectFrom('snapshots')
        .select(['id', 'team_id', 'size_bytes', 'ready_at', 'deleted_at'])
        .where('ready_at', 'is not', null)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('meter_segments').select('meter_segments.id').whereRef('meter_segments.subject_id', '=', 'snapshots.id'))))
        .execute();
      for (const s of fresh) {
        await tx
          .insertInto('meter_segments')
          .values({
            team_id: s.team_id,
            subject_kind: SNAPSHOT,
            subject_id: s.id,
            resource: 'storage',
            quantity: Number(s.size_bytes),
            start_at: Number(s.ready_at),
            end_at: s.deleted_at === null ? null : Math.max(Number(s.deleted_at), Number(s.ready_at)),
          })
          .execute();
      }
      const gone = await tx
        .selectFrom('meter_segments')
        .innerJoin('snapshots', 'snapshots.id', 'meter_segments.subject_id')
        .select(['meter_segments.id', 'meter_segments.start_at', 'snapshots.deleted_at'])
        .where('meter_segments.subject_kind', '=', SNAPSHOT)
        .where('meter_segments.end_at', 'is', null)
        .where('snapshots.deleted_at', 'is not', null)
        .execute();
      for (const g of gone) {
        await tx
          .updateTable('meter_segments')
          .set({ end_at: Math.max(Number(g.deleted_at), Number(g.start_at)) })
          .where('id', '=', g.id)
          .execute();
      }
    });
  }

  /**
   * Volume storage follows the volumes table: a volume holds its size (size_mib, what it reserves,
   * like a sandbox's disk) from its creation; a grow starts a new segment at the change; a deleted
   * volume (its row gone) stops at this sync, within a billing tick of the delete.
   */
  async syncVolumes(now: number): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const volumes = await tx.selectFrom('volumes').select(['id', 'team_id', 'size_mib', 'created_at', 'updated_at']).execute();
      const open = await tx.selectFrom('meter_segments').select(['id', 'subject_id', 'quantity', 'start_at']).where('subject_kind', '=', VOLUME).where('end_at', 'is', null).execute();
      const openBy = new Map(open.map((o) => [o.subject_id, o]));
      const seen = new Set<string>();
      for (const v of volumes) {
        seen.add(v.id);
        const bytes = Number(v.size_mib) * 1024 * 1024;
        const seg = openBy.get(v.id);
        if (seg && Number(seg.quantity) === bytes) continue;
        let start = Number(v.created_at);
        if (seg) {
          start = Math.max(Number(v.updated_at), Number(seg.start_at));
          await tx.updateTable('meter_segments').set({ end_at: start }).where('id', '=', seg.id).execute();
        }
        await tx.insertInto('meter_segments').values({ team_id: v.team_id, subject_kind: VOLUME, subject_id: v.id, resource: 'storage', quantity: bytes, start_at: start, end_at: null }).execute();
      }
      for (const o of open) {
        if (!seen.has(o.subject_id))
          await tx
            .updateTable('meter_segments')
            .set({ end_at: Math.max(now, Number(o.start_at)) })
            .where('id', '=', o.id)
            .execute();
      }
    });
  }

  /** Storage segments still accruing, for the periodic size sample. */
  async openStorage(): Promise<{ subjectKind: string; subjectId: string; quantity: number }[]> {
    const rows = await this.db.selectFrom('meter_segments').select(['subject_kind', 'subject_id', 'quantity']).where('resource', '=', 'storage').where('end_at', 'is', null).execute();
    return rows.map((r) => ({ subjectKind: r.subject_kind, subjectId: r.subject_id, quantity: Number(r.quantity) }));
  }

  /** Live sandboxes per status, across teams: for the operator's metrics. */
  async sandboxesByStatus(): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('sandboxes')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .where('deleted_at', 'is', null)
      .groupBy('status')
      .execute();
    return new Map(rows.map((r) => [r.status, Number(r.n)]));
  }

  async resizeStorage(subjectId: string, bytes: number, at: number): Promise<void> {
    await this.db.transaction().execute((tx) => resize(tx, subjectId, 'storage', bytes, at));
  }
}

const EVENTS_CURSOR = 'sandbox_events';

/** Rolls back a metering batch whose events another replica metered first. */
class StaleBatch extends Error {}
const SNAPSHOT = 'snapshot';
const VOLUME = 'volume';

export type LedgerChange =
  | { kind: 'open'; teamId: string; subjectKind: string; subjectId: string; resource: MeterResource; quantity: number; at: number }
  | { kind: 'close'; subjectId: string; resources: MeterResource[]; at: number }
  | { kind: 'resize'; subjectId: string; resource: MeterResource; quantity: number; at: number };

async function applyChange(tx: Db, c: LedgerChange): Promise<void> {
  if (c.kind === 'open') {
    // Opening is idempotent: a subject holds at most one open segment per resource.
    const open = await openSegment(tx, c.subjectId, c.resource);
    if (open) return;
    await tx
      .insertInto('meter_segments')
      .values({ team_id: c.teamId, subject_kind: c.subjectKind, subject_id: c.subjectId, resource: c.resource, quantity: c.quantity, start_at: c.at, end_at: null })
      .execute();
  } else if (c.kind === 'close') {
    // Truncate rather than just close: the size sampler may have cut segments after `at`.
    await tx.deleteFrom('meter_segments').where('subject_id', '=', c.subjectId).where('resource', 'in', c.resources).where('start_at', '>=', c.at).execute();
    await tx
      .updateTable('meter_segments')
      .set({ end_at: c.at })
      .where('subject_id', '=', c.subjectId)
      .where('resource', 'in', c.resources)
      .where((eb) => eb.or([eb('end_at', 'is', null), eb('end_at', '>', c.at)]))
      .execute();
  } else {
    await resize(tx, c.subjectId, c.resource, c.quantity, c.at);
  }
}

async function openSegment(tx: Db, subjectId: string, resource: MeterResource) {
  return tx.selectFrom('meter_segments').selectAll().where('subject_id', '=', subjectId).where('resource', '=', resource).where('end_at', 'is', null).executeTakeFirst();
}

/** Ends the open segment at `at` and continues it with the new quantity; no-op when unchanged or closed. */
async function resize(tx: Db, subjectId: string, resource: MeterResource, quantity: number, at: number): Promise<void> {
  const open = await openSegment(tx, subjectId, resource);
  if (!open || Number(open.quantity) === quantity) return;
  const cut = Math.max(at, Number(open.start_at));
  if (cut === Number(open.start_at)) {
    await tx.updateTable('meter_segments').set({ quantity }).where('id', '=', open.id).execute();
    return;
  }
  await tx.updateTable('meter_segments').set({ end_at: cut }).where('id', '=', open.id).execute();
  await tx.insertInto('meter_segments').values({ team_id: open.team_id, subject_kind: open.subject_kind, subject_id: subjectId, resource, quantity, start_at: cut, end_at: null }).execute();
}
