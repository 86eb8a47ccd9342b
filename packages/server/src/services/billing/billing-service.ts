import type { Clock } from '../../clock.ts';
import { iso } from '../../clock.ts';
import { forbidden, notFound } from '../../errors.ts';
import { newId, parseUuid, taggedSandboxId } from '../../ids.ts';
import type { BillingPeriod, BillingSummary, SandboxUsageList, TeamBillingUsage } from '../../schemas/billing.ts';
import type { BillingStore, PeriodRecord, PlanRecord } from '../../store/billing.ts';
import type { Principal } from '../access/principal.ts';
import type { GateService } from '../access/gates.ts';
import { type MeteringService, type Usage, usageOf } from './metering.ts';
import type { TeamManagementService } from '../access/team-management.ts';
import { KeyedLock } from '../../runtime/host/keyed-lock.ts';
import { monthStart, nextMonthStart } from './periods.ts';
import { byKey, chargeBreakdown, pricedLines, resourceLines, roundUsd } from './pricing.ts';

export interface BillingDeps {
  store: BillingStore;
  metering: MeteringService;
  gates: GateService;
  teams: TeamManagementService;
  clock: Clock;
}

const TRIAL_SOURCE = 'local_trial';

/** Billing accounts, monthly periods and what the team owes for them, in shadow mode (nothing is collected). */
export class BillingService {
  readonly deps: BillingDeps;
  readonly #settling = new KeyedLock();

  constructor(deps: BillingDeps) {
    this.deps = deps;
  }

  /** The periodic job: meter new events, open missing accounts and roll every ended period over. */
  async runJob(): Promise<void> {
    await this.deps.metering.sync();
    for (const teamId of await this.deps.store.teamIds()) await this.#settle(teamId);
  }

  async summary(p: Principal): Promise<BillingSummary> {
    this.#requireRead(p);
    await this.deps.gates.require(p.teamId, 'tenant_usage_dashboard');
    const { plan, period, now } = await this.#current(p.teamId);
    const usage = await this.#liveUsage(p.teamId, period, now);
    const lines = pricedLines(usage.total, plan);
    const cost = chargeBreakdown(lines);

    const credits = await this.deps.store.credits(p.teamId);
    const granted = credits.reduce((a, c) => a + c.amountUsd, 0);
    const trialGrant = roundUsd(credits.filter((c) => c.source === TRIAL_SOURCE).reduce((a, c) => a + c.amountUsd, 0));
    const usedBefore = await this.#creditsUsedBefore(p.teamId);
    const available = Math.max(0, roundUsd(granted - usedBefore));
    const applied = roundUsd(Math.min(cost.total, available));
    // The trial credit is the first credit spent.
    const trialConsumed = roundUsd(Math.min(trialGrant, usedBefore + applied));
    const trialRemaining = roundUsd(trialGrant - trialConsumed);
    const at = iso(now);
    return {
      mode: 'shadow',
      billing_mode: 'shadow',
      permissions: { can_view: true, can_manage: false },
      checkout_available: false,
      portal_available: false,
      payment_setup_required: false,
      current_charges_usd: cost.total,
      credits_applied_usd: applied,
      credits_remaining_usd: roundUsd(available - applied),
      expected_invoice_amount_usd: roundUsd(cost.total - applied),
      cost_breakdown_usd: { compute: cost.compute, memory: cost.memory, storage: cost.storage },
      resources: lines,
      resources_by_key: byKey(lines),
      billing_period: { start: iso(period.start), end: iso(period.end) },
      pricing_tier: { plan_key: plan.planKey, plan_name: plan.planName, currency: plan.currency },
      trial: {
        grant_usd: trialGrant,
        consumed_usd: trialConsumed,
        remaining_usd: trialRemaining,
        state: trialGrant === 0 ? 'none' : trialRemaining > 0 ? 'active' : 'exhausted',
        eligible: plan.trialGrantUsd > 0,
      },
      calculated_at: at,
      payments_credit_balance_usd: 0,
      payments_credits_applied_usd: 0,
      payments_remaining_credit_usd: null,
      credit_source: 'local_trial',
      credit_status: 'available',
      credit_observed_at: at,
    };
  }

  async usage(p: Principal, teamId: string, periodId: string | undefined): Promise<TeamBillingUsage> {
    this.deps.teams.checkTeam(p, teamId);
    this.#requireRead(p);
    const { plan, period, now } = await this.#selectPeriod(p.teamId, periodId);
    const live = period.totals === null;
    const u: Usage = period.totals ?? (await this.#liveUsage(p.teamId, period, now)).total;
    const lines = resourceLines(u, plan);
    return {
      period_id: period.id,
      status: period.status,
      team_id: p.teamId,
      period_start: iso(period.start),
      period_end: iso(period.end),
      updated_at: iso(live ? now : period.updatedAt),
      exported_at: null,
      finalized_at: period.finalizedAt === null ? null : iso(period.finalizedAt),
      vcpu_seconds: u.vcpuSeconds,
      memory_mib_seconds: u.memoryMibSeconds,
      storage_mib_seconds: u.storageMibSeconds,
      cpu_vcpu_hours: u.vcpuSeconds / 3600,
      memory_gib_hours: u.memoryMibSeconds / 1024 / 3600,
      storage_gib_hours: u.storageMibSeconds / 1024 / 3600,
      resources: lines,
      resources_by_key: byKey(lines),
    };
  }

  async periods(p: Principal, teamId: string): Promise<BillingPeriod[]> {
    this.deps.teams.checkTeam(p, teamId);
    this.#requireRead(p);
    const { period: current } = await this.#current(p.teamId);
    return (await this.deps.store.periods(p.teamId)).map((r) => ({
      period_id: r.id,
      status: r.status,
      blocked_reason: null,
      period_start: iso(r.start),
      period_end: iso(r.end),
      approved_at: null,
      exported_at: null,
      finalized_at: r.finalizedAt === null ? null : iso(r.finalizedAt),
      current_period_start: iso(current.start),
      current_period_end: iso(current.end),
      cancel_at_period_end: false,
      payments_customer_id: null,
      payments_subscription_id: null,
      payments_subscription_status: null,
      payments_invoice_status: null,
    }));
  }

  /** Usage and charge of each sandbox in a period, at the team's current rates. */
  async sandboxUsage(p: Principal, teamId: string, periodId: string | undefined): Promise<SandboxUsageList> {
    this.deps.teams.checkTeam(p, teamId);
    this.#requireRead(p);
    const { plan, period, now } = await this.#selectPeriod(p.teamId, periodId);
    const { bySubject } = await this.#liveUsage(p.teamId, period, now);
    // A snapshot's storage counts towards the sandbox it was taken from.
    const sources = await this.deps.store.snapshotSources([...bySubject.keys()]);
    // Volumes outlive sandboxes: their storage is on the team's summary, not a sandbox's line.
    const volumes = await this.deps.store.volumeSubjects([...bySubject.keys()]);
    const bySandbox = new Map<string, Usage>();
    for (const [subject, u] of bySubject) {
      if (volumes.has(subject)) continue;
      const id = sources.get(subject) ?? subject;
      const acc = bySandbox.get(id) ?? { vcpuSeconds: 0, memoryMibSeconds: 0, storageMibSeconds: 0 };
      acc.vcpuSeconds += u.vcpuSeconds;
      acc.memoryMibSeconds += u.memoryMibSeconds;
      acc.storageMibSeconds += u.storageMibSeconds;
      bySandbox.set(id, acc);
    }
    const labels = await this.deps.store.sandboxLabels([...bySandbox.keys()]);
    const sandboxes = [...bySandbox].map(([id, u]) => {
      const label = labels.get(id);
      return {
        sandbox_id: label ? taggedSandboxId(label.region, id) : id,
        ...(label?.name ? { name: label.name } : {}),
        deleted: label?.deleted ?? true,
        vcpu_seconds: u.vcpuSeconds,
        memory_mib_seconds: u.memoryMibSeconds,
        storage_mib_seconds: u.storageMibSeconds,
        charge_usd: chargeBreakdown(pricedLines(u, plan)).total,
      };
    });
    sandboxes.sort((a, b) => b.charge_usd - a.charge_usd || a.sandbox_id.localeCompare(b.sandbox_id));
    return { period_id: period.id, status: period.status, period_start: iso(period.start), period_end: iso(period.end), sandboxes };
  }

  #requireRead(p: Principal): void {
    if (!p.permissions.includes('billing:read')) throw forbidden("this API key lacks the 'billing:read' permission");
  }

  /** Usage of the period up to now (or its end, if earlier), from the up-to-date ledger. */
  async #liveUsage(teamId: string, period: PeriodRecord, now: number) {
    const to = Math.min(now, period.end);
    return usageOf(await this.deps.store.segments(teamId, period.start, to), period.start, to);
  }

  /** Brings ledger and periods up to date and returns the open period. */
  async #current(teamId: string): Promise<{ plan: PlanRecord; period: PeriodRecord; now: number }> {
    await this.deps.metering.sync();
    await this.#settle(teamId);
    const now = this.deps.clock.now();
    const [plan, period] = await Promise.all([this.deps.store.planOf(teamId), this.deps.store.openPeriod(teamId)]);
    if (!plan || !period) throw new Error(`billing account of team ${teamId} is incomplete`);
    return { plan, period, now };
  }

  async #selectPeriod(teamId: string, periodId: string | undefined) {
    const current = await this.#current(teamId);
    if (periodId === undefined) return current;
    const id = parseUuid(periodId, 'billing period id');
    const period = (await this.deps.store.periods(teamId)).find((r) => r.id === id);
    if (!period) throw notFound(`billing period '${id}' not found`);
    return { ...current, period };
  }

  async #creditsUsedBefore(teamId: string): Promise<number> {
    return roundUsd((await this.deps.store.periods(teamId)).reduce((a, r) => a + (r.totals?.creditsAppliedUsd ?? 0), 0));
  }

  /**
   * One settle per team at a time. A caller waits for the one running and then settles itself:
   * the running one read the clock earlier and may leave a period open that has ended since.
   */
  #settle(teamId: string): Promise<void> {
    return this.#settling.run(teamId, () => this.#doSettle(teamId));
  }

  /** Opens the account when missing and finalizes each ended period, opening the next. */
  async #doSettle(teamId: string): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    let plan = await store.planOf(teamId);
    if (!plan) {
      await store.openAccount({ teamId, creditId: newId(), period: { id: newId(), start: monthStart(now), end: nextMonthStart(now) }, now });
      plan = await store.planOf(teamId);
      if (!plan) throw new Error(`could not open the billing account of team ${teamId}`);
    }
    let metered = false;
    for (;;) {
      const open = await store.openPeriod(teamId);
      if (!open || open.end > now) return;
      // Every event committed before `now` (a create just before midnight, say) is in the ledger before
      // a period that ended by then is frozen: a sync that ran before this settle may have missed it.
      if (!metered) await this.deps.metering.sync();
      metered = true;
      const u = usageOf(await store.segments(teamId, open.start, open.end), open.start, open.end).total;
      const charges = chargeBreakdown(pricedLines(u, plan)).total;
      const granted = (await store.credits(teamId)).reduce((a, c) => a + c.amountUsd, 0);
      const available = Math.max(0, roundUsd(granted - (await this.#creditsUsedBefore(teamId))));
      await store.finalize(
        open,
        { ...u, chargesUsd: charges, creditsAppliedUsd: roundUsd(Math.min(charges, available)) },
        { id: newId(), start: open.end, end: nextMonthStart(open.end), planKey: plan.planKey },
        now,
      );
    }
  }
}
