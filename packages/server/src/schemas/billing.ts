import { type Static, type TSchema, Type } from 'typebox';
import { DateTime } from './common.ts';

const Nullable = <T extends TSchema>(t: T, description: string) => Type.Union([t, Type.Null()], { description });
const Usd = (description: string) => Type.Number({ description: `USD. ${description}` });

const RESOURCE_LINE_FIELDS = {
  resource_key: Type.String({ description: 'Stable key: vcpu_seconds, memory_mib_seconds, storage_mib_seconds' }),
  resource: Type.String({ description: 'Cost group: compute, memory or storage' }),
  display_name: Type.String(),
  unit: Type.String({ description: 'Unit of `usage`: vcpu_second or mib_second' }),
  display_unit: Type.String({ description: 'Unit people read and prices are quoted in: vCPU-hour or GiB-hour' }),
  sort_order: Type.Integer(),
  usage: Type.Number({ description: 'Usage in `unit`' }),
  tracked: Type.Boolean({ description: 'Metered by this platform' }),
  billable: Type.Boolean({ description: "Charged under the team's plan (its rate is above zero)" }),
};

export const ResourceLine = Type.Object(RESOURCE_LINE_FIELDS, { $id: 'BillingResourceLine' });

export const PricedResourceLine = Type.Object(
  {
    ...RESOURCE_LINE_FIELDS,
    unit_price_usd: Type.Number({ description: "USD per `unit` at the team's current rates" }),
    charge_usd: Usd('usage x unit_price_usd, before credits'),
  },
  { $id: 'BillingPricedResourceLine' },
);

export const BillingSummary = Type.Object(
  {
    mode: Type.Union([Type.Literal('shadow'), Type.Literal('live')], { description: 'Always shadow here: charges are computed, nothing is collected' }),
    billing_mode: Type.Union([Type.Literal('shadow'), Type.Literal('live')], { description: 'Same as mode' }),
    permissions: Type.Object({
      can_view: Type.Boolean(),
      can_manage: Type.Boolean({ description: 'False in shadow mode: there is no payment set-up to manage' }),
    }),
    checkout_available: Type.Boolean(),
    portal_available: Type.Boolean(),
    payment_setup_required: Type.Boolean(),
    current_charges_usd: Usd('Charges of the current period so far, before credits'),
    credits_applied_usd: Usd('Credits applied against current charges'),
    credits_remaining_usd: Usd('Credits left after applying current charges'),
    expected_invoice_amount_usd: Usd('Invoice amount after credits'),
    cost_breakdown_usd: Type.Object({ compute: Type.Number(), memory: Type.Number(), storage: Type.Number() }),
    resources: Type.Array(Type.Ref('BillingPricedResourceLine')),
    resources_by_key: Type.Record(Type.String(), Type.Ref('BillingPricedResourceLine'), { description: 'The same lines keyed by resource_key' }),
    billing_period: Type.Object({ start: DateTime, end: DateTime }),
    pricing_tier: Type.Object({ plan_key: Type.String(), plan_name: Type.String(), currency: Type.String() }),
    trial: Type.Object({
      grant_usd: Type.Number(),
      consumed_usd: Type.Number({ description: 'Part of the grant used by finalized periods and current charges (trial credit is applied first)' }),
      remaining_usd: Type.Number(),
      state: Type.String({ description: 'active (credit left), exhausted (used up) or none (no grant)' }),
      eligible: Type.Boolean({ description: "The team's plan grants a trial" }),
    }),
    calculated_at: DateTime,
    payments_credit_balance_usd: Usd('0: no payment processor is connected'),
    payments_credits_applied_usd: Usd('0: no payment processor is connected'),
    payments_remaining_credit_usd: Nullable(Type.Number(), 'Remaining credit at the payment processor; null: none is connected'),
    credit_source: Type.Union([Type.Literal('local_trial'), Type.Literal('payments')], { description: 'local_trial: credits come from the local ledger' }),
    credit_status: Type.Union([Type.Literal('available'), Type.Literal('unavailable')]),
    credit_observed_at: DateTime,
  },
  { $id: 'BillingSummary' },
);
export type BillingSummary = Static<typeof BillingSummary>;

export const PeriodQuery = Type.Object(
  {
    period_id: Type.Optional(Type.String({ description: 'A period_id from GET /teams/{team_id}/billing/periods; default: the current (open) period' })),
  },
  { additionalProperties: false },
);
export type PeriodQuery = Static<typeof PeriodQuery>;

const PERIOD_STATUS = 'open: the current period, still accruing; finalized: ended, totals frozen';

export const TeamBillingUsage = Type.Object(
  {
    period_id: Type.String(),
    status: Type.String({ description: PERIOD_STATUS }),
    team_id: Type.String({ format: 'uuid' }),
    period_start: DateTime,
    period_end: DateTime,
    updated_at: DateTime,
    exported_at: Nullable(DateTime, 'Null: periods are not exported to a payment processor'),
    finalized_at: Nullable(DateTime, 'Null while the period is open'),
    vcpu_seconds: Type.Number(),
    memory_mib_seconds: Type.Number(),
    storage_mib_seconds: Type.Number(),
    cpu_vcpu_hours: Type.Number(),
    memory_gib_hours: Type.Number(),
    storage_gib_hours: Type.Number(),
    resources: Type.Array(Type.Ref('BillingResourceLine')),
    resources_by_key: Type.Record(Type.String(), Type.Ref('BillingResourceLine')),
  },
  { $id: 'TeamBillingUsage' },
);
export type TeamBillingUsage = Static<typeof TeamBillingUsage>;

export const BillingPeriod = Type.Object(
  {
    period_id: Type.String(),
    status: Type.String({ description: PERIOD_STATUS }),
    blocked_reason: Nullable(Type.String(), 'Null: nothing blocks a period in shadow mode'),
    period_start: DateTime,
    period_end: DateTime,
    approved_at: Nullable(DateTime, 'Null: shadow-mode periods need no approval'),
    exported_at: Nullable(DateTime, 'Null: periods are not exported to a payment processor'),
    finalized_at: Nullable(DateTime, 'Null while the period is open'),
    current_period_start: DateTime,
    current_period_end: DateTime,
    cancel_at_period_end: Type.Boolean(),
    payments_customer_id: Nullable(Type.String(), 'Null: no payment processor'),
    payments_subscription_id: Nullable(Type.String(), 'Null: no payment processor'),
    payments_subscription_status: Nullable(Type.String(), 'Null: no payment processor'),
    payments_invoice_status: Nullable(Type.String(), 'Null: no payment processor'),
  },
  { $id: 'BillingPeriod' },
);
export type BillingPeriod = Static<typeof BillingPeriod>;

export const BillingPeriodList = Type.Object({ periods: Type.Array(Type.Ref('BillingPeriod'), { description: 'Newest first' }) });

export const SandboxUsage = Type.Object({
  sandbox_id: Type.String({ description: 'Region-tagged sandbox id; the sandbox may since have been deleted' }),
  name: Type.Optional(Type.String()),
  deleted: Type.Boolean(),
  vcpu_seconds: Type.Number(),
  memory_mib_seconds: Type.Number(),
  storage_mib_seconds: Type.Number({ description: 'Its disk and the snapshots taken from it' }),
  charge_usd: Usd("At the team's current rates, before credits"),
});

export const SandboxUsageList = Type.Object({
  period_id: Type.String(),
  status: Type.String({ description: PERIOD_STATUS }),
  period_start: DateTime,
  period_end: DateTime,
  sandboxes: Type.Array(SandboxUsage, { description: 'Every sandbox with usage in the period, highest charge first' }),
});
export type SandboxUsageList = Static<typeof SandboxUsageList>;
