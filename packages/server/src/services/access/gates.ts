import type { Clock } from '../../clock.ts';
import { badRequest, forbidden } from '../../errors.ts';
import type { TeamManagementStore } from '../../store/team-management.ts';

/**
 * Per-team rollout gates. A gate without an explicit setting for the team has its default; on a
 * self-hosted install the usage dashboard is on unless the operator turns it off
 * (`sandpit gate disable <team> tenant_usage_dashboard`).
 */
export const GATES = {
  tenant_usage_dashboard: { default: true, description: 'GET /billing/summary' },
} as const;

export type Gate = keyof typeof GATES;

const isGate = (g: string): g is Gate => Object.hasOwn(GATES, g);

export interface GateState {
  gate: Gate;
  enabled: boolean;
  /** False when the team has no explicit setting and the default applies. */
  explicit: boolean;
  description: string;
}

export class GateService {
  readonly store: TeamManagementStore;
  readonly clock: Clock;
  constructor(store: TeamManagementStore, clock: Clock) {
    this.store = store;
    this.clock = clock;
  }

  async list(teamId: string): Promise<GateState[]> {
    const set = await this.store.gateSettings(teamId);
    return (Object.keys(GATES) as Gate[]).map((gate) => ({
      gate,
      enabled: set.get(gate) ?? GATES[gate].default,
      explicit: set.has(gate),
      description: GATES[gate].description,
    }));
  }

  async isEnabled(teamId: string, gate: Gate): Promise<boolean> {
    return (await this.store.gateSettings(teamId)).get(gate) ?? GATES[gate].default;
  }

  /** 403 `forbidden` when the gate is off for the team. */
  async require(teamId: string, gate: Gate): Promise<void> {
    if (!(await this.isEnabled(teamId, gate))) throw forbidden(`the '${gate}' feature is not enabled for this team`);
  }

  async set(teamId: string, gate: string, enabled: boolean): Promise<void> {
    if (!isGate(gate)) throw badRequest(`unknown gate '${gate.slice(0, 64)}'; known: ${Object.keys(GATES).join(', ')}`);
    await this.store.setGate(teamId, gate, enabled, this.clock.now());
  }
}
