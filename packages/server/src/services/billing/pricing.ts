import type { PlanRecord } from '../../store/billing.ts';
import type { Usage } from './metering.ts';

export interface ResourceLine {
  resource_key: string;
  resource: 'compute' | 'memory' | 'storage';
  display_name: string;
  unit: string;
  display_unit: string;
  sort_order: number;
  /** In `unit`. */
  usage: number;
  tracked: boolean;
  billable: boolean;
}

export interface PricedLine extends ResourceLine {
  unit_price_usd: number;
  charge_usd: number;
}

/** Usage is kept in the metered unit; plan rates are per hour of a vCPU or GiB, as people quote them. */
const LINES = [
  {
    resource_key: 'vcpu_seconds',
    resource: 'compute',
    display_name: 'vCPU time',
    unit: 'vcpu_second',
    display_unit: 'vCPU-hour',
    sort_order: 10,
    usage: (u: Usage) => u.vcpuSeconds,
    unitPrice: (p: PlanRecord) => p.vcpuHourUsd / 3600,
  },
  {
    resource_key: 'memory_mib_seconds',
    resource: 'memory',
    display_name: 'Memory',
    unit: 'mib_second',
    display_unit: 'GiB-hour',
    sort_order: 20,
    usage: (u: Usage) => u.memoryMibSeconds,
    unitPrice: (p: PlanRecord) => p.memoryGibHourUsd / 1024 / 3600,
  },
  {
    resource_key: 'storage_mib_seconds',
    resource: 'storage',
    display_name: 'Storage (sandbox disks, snapshots and volumes)',
    unit: 'mib_second',
    display_unit: 'GiB-hour',
    sort_order: 30,
    usage: (u: Usage) => u.storageMibSeconds,
    unitPrice: (p: PlanRecord) => p.storageGibHourUsd / 1024 / 3600,
  },
] as const;

/** Money is carried to 1e-10 USD: far below a cent, and free of floating-point noise. */
export const roundUsd = (x: number) => Math.round(x * 1e10) / 1e10;

/** Usage as resource lines, ordered by sort_order. */
export function resourceLines(u: Usage, plan: PlanRecord): ResourceLine[] {
  return LINES.map((l) => ({
    resource_key: l.resource_key,
    resource: l.resource,
    display_name: l.display_name,
    unit: l.unit,
    display_unit: l.display_unit,
    sort_order: l.sort_order,
    usage: l.usage(u),
    tracked: true,
    billable: l.unitPrice(plan) > 0,
  }));
}

/** Resource lines with their charge at the plan's rates (charge = usage x price per unit). */
export function pricedLines(u: Usage, plan: PlanRecord): PricedLine[] {
  const base = resourceLines(u, plan);
  return LINES.map((l, i) => {
    const unitPrice = l.unitPrice(plan);
    return { ...base[i]!, unit_price_usd: unitPrice, charge_usd: roundUsd(l.usage(u) * unitPrice) };
  });
}

export function chargeBreakdown(lines: PricedLine[]): { compute: number; memory: number; storage: number; total: number } {
  const by = (r: ResourceLine['resource']) => roundUsd(lines.filter((l) => l.resource === r).reduce((a, l) => a + l.charge_usd, 0));
  const compute = by('compute');
  const memory = by('memory');
  const storage = by('storage');
  return { compute, memory, storage, total: roundUsd(compute + memory + storage) };
}

export const byKey = <T extends { resource_key: string }>(lines: T[]): Record<string, T> => Object.fromEntries(lines.map((l) => [l.resource_key, l]));
