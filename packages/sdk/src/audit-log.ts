import type { HttpClient, RequestOptions } from './http.ts';
import type { AuditEntry, AuditLogPage } from './types.ts';

export interface AuditLogFilters {
  /** An API key id or a user id. */
  actor?: string;
  /** e.g. `sandbox.create`, `secret.revoke`. */
  action?: string;
  resourceType?: string;
  resourceId?: string;
  since?: Date | string;
  until?: Date | string;
  limit?: number;
  cursor?: string;
}

/** The team's audit log (the `audit:read` permission, which admins and owners hold): read only. */
export class AuditLog {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /** Entries newest first, a page at a time. */
  async *list(filters: AuditLogFilters = {}, opts: RequestOptions = {}): AsyncGenerator<AuditEntry[]> {
    let cursor = filters.cursor;
    const time = (v: Date | string) => (typeof v === 'string' ? v : v.toISOString());
    do {
      const query = new URLSearchParams();
      if (filters.actor !== undefined) query.set('actor', filters.actor);
      if (filters.action !== undefined) query.set('action', filters.action);
      if (filters.resourceType !== undefined) query.set('resource_type', filters.resourceType);
      if (filters.resourceId !== undefined) query.set('resource_id', filters.resourceId);
      if (filters.since !== undefined) query.set('since', time(filters.since));
      if (filters.until !== undefined) query.set('until', time(filters.until));
      if (filters.limit !== undefined) query.set('limit', String(filters.limit));
      if (cursor !== undefined) query.set('cursor', cursor);
      const page = await this.#http.json<AuditLogPage>({ method: 'GET', path: '/audit-log', query, ...opts });
      yield page.entries;
      cursor = page.next_cursor;
    } while (cursor !== undefined);
  }
}
