import type { Logger } from 'pino';
import { iso, type Clock } from '../../clock.ts';
import { badRequest } from '../../errors.ts';
import { timeOrderedId } from '../../ids.ts';
import type { AuditEntry, AuditLogQuery } from '../../schemas/audit-log.ts';
import type { AuditLogStore, AuditRecord } from '../../store/audit-log.ts';
import type { Principal } from '../access/principal.ts';
import { keysetPage } from '../paging.ts';

const PRUNE_BATCH = 5000;

export interface AuditLogDeps {
  store: AuditLogStore;
  clock: Clock;
  log: Logger;
  /** Entries older than this are pruned. */
  retentionMs: number;
}

/**
 * The audit log. A call's entry is queued when its response has been sent and written with the
 * other entries of the same turn of the event loop in one statement, so recording costs the call
 * itself nothing it waits for (bench/observability.bench.ts measures it).
 */
export class AuditLog {
  readonly deps: AuditLogDeps;
  #queue: AuditRecord[] = [];
  #flushing: Promise<void> | undefined;

  constructor(deps: AuditLogDeps) {
    this.deps = deps;
  }

  record(entry: Omit<AuditRecord, 'id' | 'at'>): void {
    const at = this.deps.clock.now();
    this.#queue.push({ ...entry, id: timeOrderedId(at), at });
    if (this.#queue.length === 1 && !this.#flushing) setImmediate(() => void this.flush());
  }

  /** Writes what is queued; resolves once everything recorded before the call is in the store. */
  async flush(): Promise<void> {
    while (this.#flushing) await this.#flushing;
    if (this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    this.#flushing = this.deps.store.append(batch).catch((err) => {
      // Kept for the next flush: an entry is dropped only by a crash, never by a store hiccup.
      this.#queue = [...batch, ...this.#queue];
      this.deps.log.error({ err: String(err), entries: batch.length }, 'audit log write failed; retrying');
    });
    await this.#flushing;
    this.#flushing = undefined;
    if (this.#queue.length > 0) setTimeout(() => void this.flush(), 1000).unref();
  }

  async list(p: Principal, q: AuditLogQuery): Promise<{ items: AuditEntry[]; nextCursor?: string }> {
    const time = (name: string, v: string | undefined) => {
      if (v === undefined) return undefined;
      const t = Date.parse(v);
      if (Number.isNaN(t)) throw badRequest(`${name} must be an RFC 3339 time`);
      return t;
    };
    const since = time('since', q.since);
    const until = time('until', q.until);
    // What this replica recorded just before is part of the answer.
    await this.flush();
    const page = await keysetPage(q, (after, limit) =>
      this.deps.store.list({ teamId: p.teamId, actor: q.actor, action: q.action, resourceType: q.resource_type, resourceId: q.resource_id, since, until, after, limit }),
    );
    return { items: page.items.map(entryView), nextCursor: page.nextCursor };
  }

  /** Drops entries past retention; run by one replica at a time. */
  async prune(): Promise<number> {
    const before = this.deps.clock.now() - this.deps.retentionMs;
    let total = 0;
    for (;;) {
      const n = await this.deps.store.prune(before, PRUNE_BATCH);
      total += n;
      if (n < PRUNE_BATCH) return total;
    }
  }
}

export function entryView(r: AuditRecord): AuditEntry {
  const e: AuditEntry = {
    id: r.id,
    at: iso(r.at),
    actor: { type: r.actorType },
    action: r.action,
    resource: { type: r.resourceType },
    request: { method: r.method, route: r.route, ip: r.ip },
    status: r.status,
  };
  if (r.keyId) e.actor.key_id = r.keyId;
  if (r.userId) e.actor.user_id = r.userId;
  if (r.resourceId) e.resource.id = r.resourceId;
  if (r.userAgent) e.request.user_agent = r.userAgent;
  if (r.traceId) e.trace_id = r.traceId;
  return e;
}
