import type { HttpClient, RequestOptions } from './http.ts';
import type { BillingPeriod, BillingSummary, SandboxBillingUsage, TeamBillingUsage } from './types.ts';

export interface PeriodOptions extends RequestOptions {
  /** A `period_id` from `periods()`; default the current period. */
  periodId?: string;
}

/** The calling key's team's usage and charges (needs billing:read). */
export class Billing {
  readonly #http: HttpClient;
  /** The calling key's team id (asked of `GET /me` once). */
  readonly #teamId: (opts?: RequestOptions) => Promise<string>;

  constructor(http: HttpClient, teamId: (opts?: RequestOptions) => Promise<string>) {
    this.#http = http;
    this.#teamId = teamId;
  }

  /** Charges, credits and usage of the current period. */
  summary(opts: RequestOptions = {}): Promise<BillingSummary> {
    return this.#http.json({ method: 'GET', path: '/billing/summary', ...opts });
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
    const path = `/teams/${encodeURIComponent(await this.#teamId(request))}${tail}`;
    return this.#http.json({ method: 'GET', path, query, ...request });
  }
}
