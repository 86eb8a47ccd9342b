import type { Insertable, Selectable } from 'kysely';
import type { Db } from './db.ts';
import type { Keyset } from './keyset.ts';
import type { AuditLogTable } from './schema.ts';

export interface AuditRecord {
  id: string;
  teamId: string;
  at: number;
  actorType: 'api_key' | 'console_session' | 'access_token';
  keyId: string | null;
  userId: string | null;
  action: string;
  resourceType: string;
  resourceId: string | null;
  method: string;
  route: string;
  status: number;
  ip: string;
  userAgent: string | null;
  traceId: string | null;
}

export interface AuditFilter {
  teamId: string;
  /** A key id or a user id. */
  actor?: string;
  action?: string;
  resourceType?: string;
  resourceId?: string;
  /** [since, until) in epoch ms. */
  since?: number;
  until?: number;
  after?: Keyset;
  limit: number;
}

const toRow = (r: AuditRecord): Insertable<AuditLogTable> => ({
  id: r.id,
  team_id: r.teamId,
  at: r.at,
  actor_type: r.actorType,
  key_id: r.keyId,
  user_id: r.userId,
  action: r.action,
  resource_type: r.resourceType,
  resource_id: r.resourceId,
  method: r.method,
  route: r.route,
  status: r.status,
  ip: r.ip,
  user_agent: r.userAgent,
  trace_id: r.traceId,
});

const fromRow = (r: Selectable<AuditLogTable>): AuditRecord & Keyset => ({
  id: r.id,
  teamId: r.team_id,
  at: Number(r.at),
  createdAt: Number(r.at),
  actorType: r.actor_type as AuditRecord['actorType'],
  keyId: r.key_id,
  userId: r.user_id,
  action: r.action,
  resourceType: r.resource_type,
  resourceId: r.resource_id,
  method: r.method,
  route: r.route,
  status: Number(r.status),
  ip: r.ip,
  userAgent: r.user_agent,
  traceId: r.trace_id,
});

/** The audit log: appended to and read, never updated; rows past retention are pruned. */
export class AuditLogStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** One statement for a batch of records. */
  async append(records: AuditRecord[]): Promise<void> {
    if (records.length > 0) await this.db.insertInto('audit_log').values(records.map(toRow)).execute();
  }

  /** Newest first. */
  async list(f: AuditFilter): Promise<(AuditRecord & Keyset)[]> {
    let q = this.db.selectFrom('audit_log').selectAll().where('team_id', '=', f.teamId);
    if (f.actor) q = q.where((eb) => eb.or([eb('key_id', '=', f.actor!), eb('user_id', '=', f.actor!)]));
    if (f.action) q = q.where('action', '=', f.action);
    if (f.resourceType) q = q.where('resource_type', '=', f.resourceType);
    if (f.resourceId) q = q.where('resource_id', '=', f.resourceId);
    if (f.since !== undefined) q = q.where('at', '>=', f.since);
    if (f.until !== undefined) q = q.where('at', '<', f.until);
    if (f.after) {
      const { createdAt, id } = f.after;
      q = q.where((eb) => eb(eb.refTuple('at', 'id'), '<', eb.tuple(createdAt, id)));
    }
    const rows = await q.orderBy('at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
    return rows.map(fromRow);
  }

  /** Removes rows older than `before`, at most `batch` of them; returns how many. */
  async prune(before: number, batch: number): Promise<number> {
    const old = this.db.selectFrom('audit_log').select('id').where('at', '<', before).orderBy('at').limit(batch);
    const r = await this.db.deleteFrom('audit_log').where('id', 'in', old).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
