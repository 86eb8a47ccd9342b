import type { SandpitClient } from './client.ts';
import type { RequestOptions } from './http.ts';
import type { BillingPeriod, BillingSummary, SandboxBillingUsage, TeamBillingUsage } from './types.ts';

export interface PeriodOptions extends RequestOptions {
  /** A `period_id` from `periods()`; default the current period. */
  periodId?: string;
}

/** The calling key's team's usage and charges (needs billing:read). */
export class Billing {
  readonly #client: SandpitClient;

  constructor(client: SandpitClient) {
    this.#client = client;
  }

  /** Charges, credits and usage of the current period. */
  summary(opts: RequestOptions = {}): Promise<BillingSummary> {
    return this.#client.http.json({ method: 'GET', path: '/billing/summary', ...opts });
  }

  /** Usage of one period. */
  async usage(opts: PeriodOptions = {}): Promise<TeamBillingUsage> {
    return this.#get('/billing/usage', opts);
  }

  /** Usage and charge of each sandbox in one period. */
  async sandboxUsage(opts: PeriodOptions = {}): Promise<SandboxBillingUsage> {
    return this.#get('/billing/usage/sandboxes', opts);
  }

  /** Every period since the billing account was opened, newest first. */
  async periods(opts: RequestOptions = {}): Promise<BillingPeriod[]> {
    return (await this.#get<{ periods: BillingPeriod[] }>('/billing/periods', opts)).periods;
  }

  async #get<T>(tail: string, opts: PeriodOptions): Promise<T> {
    const { periodId, ...request } = opts;
    const query = periodId === undefined ? undefined : new URLSearchParams({ period_id: periodId });
    const path = `/teams/${encodeURIComponent(await this.#client.teamId(request))}${tail}`;
    return this.#client.http.json({ method: 'GET', path, query, ...request });
  }
}
