import { get, type Me, when } from '../api.ts';
import { ErrorText, Section, usePoll } from '../ui.tsx';

interface Line {
  resource_key: string;
  display_name: string;
  usage: number;
  unit: string;
  charge_usd: number;
}

interface Summary {
  current_charges_usd: number;
  credits_applied_usd: number;
  resources: Line[];
  billing_period: { start: string; end: string };
  pricing_tier: { plan_name: string };
  trial: { remaining_usd: number; state: string };
  mode: string;
}

interface SandboxUsage {
  sandbox_id: string;
  name?: string;
  deleted: boolean;
  vcpu_seconds: number;
  memory_mib_seconds: number;
  storage_mib_seconds: number;
  charge_usd: number;
}

const RESOURCES: [keyof SandboxUsage, string, number, string][] = [
  ['vcpu_seconds', 'vCPU', 3600, 'vCPU-hours'],
  ['memory_mib_seconds', 'Memory', 3600 * 1024, 'GiB-hours'],
  ['storage_mib_seconds', 'Storage', 3600 * 1024, 'GiB-hours'],
];

const usd = (n: number) => `$${n.toFixed(4)}`;

/** One horizontal bar per sandbox, for one resource of the current period. */
function UsageChart({ title, unit, rows }: { title: string; unit: string; rows: { label: string; value: number }[] }) {
  const max = Math.max(...rows.map((r) => r.value), 1e-9);
  const h = 22;
  return (
    <figure class="chart">
      <figcaption>
        {title} ({unit})
      </figcaption>
      <svg width="100%" height={Math.max(rows.length, 1) * h + 4} role="img" aria-label={`${title} usage by sandbox`} data-bars={rows.length}>
        {rows.map((r, i) => (
          <g key={r.label} transform={`translate(0 ${i * h + 2})`}>
            <rect x="0" y="0" height={h - 6} width={`${Math.max((r.value / max) * 60, 0.5)}%`} class="bar" />
            <text x={`${Math.max((r.value / max) * 60, 0.5) + 1}%`} y={h - 10} class="bar-label">
              {r.label}: {r.value.toPrecision(3)}
            </text>
          </g>
        ))}
      </svg>
    </figure>
  );
}

export function BillingPage({ me }: { me: Me }) {
  const summary = usePoll(() => get<Summary>('/billing/summary'), [], 15_000);
  const usage = usePoll(() => get<{ sandboxes: SandboxUsage[] }>(`/teams/${me.team_id}/billing/usage/sandboxes`), [me.team_id], 15_000);
  const s = summary.data;
  const top = (usage.data?.sandboxes ?? []).slice(0, 10);
  return (
    <>
      <h1>Billing</h1>
      <ErrorText error={summary.error ?? usage.error} />
      {s && (
        <Section title="Current period">
          <dl class="summary">
            <dt>Period</dt>
            <dd>
              {when(s.billing_period.start)} – {when(s.billing_period.end)}
            </dd>
            <dt>Plan</dt>
            <dd>
              {s.pricing_tier.plan_name} ({s.mode})
            </dd>
            <dt>Charges so far</dt>
            <dd>{usd(s.current_charges_usd)}</dd>
            <dt>Credits applied</dt>
            <dd>{usd(s.credits_applied_usd)}</dd>
            <dt>Trial credit left</dt>
            <dd>
              {usd(s.trial.remaining_usd)} ({s.trial.state})
            </dd>
            {s.resources.map((r) => (
              <>
                <dt key={`${r.resource_key}-t`}>{r.display_name}</dt>
                <dd key={`${r.resource_key}-d`}>
                  {r.usage.toFixed(1)} {r.unit}s · {usd(r.charge_usd)}
                </dd>
              </>
            ))}
          </dl>
        </Section>
      )}
      <Section title="Usage by sandbox (top 10)">
        {top.length === 0 && <p class="hint">No usage in this period yet.</p>}
        <div class="grid">
          {RESOURCES.map(([key, title, div, unit]) => (
            <UsageChart key={key} title={title} unit={unit} rows={top.map((u) => ({ label: u.name ?? u.sandbox_id.slice(-8), value: (u[key] as number) / div }))} />
          ))}
        </div>
      </Section>
    </>
  );
}
