import type { Insertable, Selectable } from 'kysely';
import type { Db } from './db.ts';
import type { Keyset } from './keyset.ts';
import type { WebhookDeliveryTable, WebhookTable } from './schema.ts';

export interface WebhookRecord {
  id: string;
  teamId: string;
  url: string;
  events: string[];
  description: string | null;
  /** Ciphertext of the signing secret. */
  secret: string;
  active: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface AttemptRecord {
  at: number;
  statusCode?: number;
  error?: string;
  durationMs: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryRecord {
  id: string;
  webhookId: string;
  teamId: string;
  eventId: string;
  eventType: string;
  orderingKey: string;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number;
  lastStatusCode: number | null;
  lastError: string | null;
  attemptLog: AttemptRecord[];
  createdAt: number;
  updatedAt: number;
  deliveredAt: number | null;
}

/** An event read from a lifecycle log, not yet turned into deliveries. */
export interface LoggedEvent {
  seq: number;
  teamId: string;
  /** The log's own type (created, paused, ... for sandboxes; the webhook type for resource_events). */
  type: string;
  at: number;
  orderingKey: string;
  /** The resource as the API showed it (JSON); null on sandbox events older than webhooks. */
  resource: string | null;
  sandboxId?: string;
}

export const LOGS = ['sandbox_events', 'resource_events'] as const;
export type LogName = (typeof LOGS)[number];

const webhookFromRow = (r: Selectable<WebhookTable>): WebhookRecord => ({
  id: r.id,
  teamId: r.team_id,
  url: r.url,
  events: JSON.parse(r.events),
  description: r.description,
  secret: r.secret,
  active: Number(r.active) === 1,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

const webhookToRow = (w: WebhookRecord): WebhookTable => ({
  id: w.id,
  team_id: w.teamId,
  url: w.url,
  events: JSON.stringify(w.events),
  description: w.description,
  secret: w.secret,
  active: w.active ? 1 : 0,
  created_at: w.createdAt,
  updated_at: w.updatedAt,
});

const deliveryFromRow = (r: Selectable<WebhookDeliveryTable>): DeliveryRecord => ({
  id: r.id,
  webhookId: r.webhook_id,
  teamId: r.team_id,
  eventId: r.event_id,
  eventType: r.event_type,
  orderingKey: r.ordering_key,
  payload: r.payload,
  status: r.status as DeliveryStatus,
  attempts: Number(r.attempts),
  nextAttemptAt: Number(r.next_attempt_at),
  lastStatusCode: r.last_status_code === null ? null : Number(r.last_status_code),
  lastError: r.last_error,
  attemptLog: JSON.parse(r.attempt_log),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  deliveredAt: r.delivered_at === null ? null : Number(r.delivered_at),
});

export const deliveryToRow = (d: DeliveryRecord): Insertable<WebhookDeliveryTable> => ({
  id: d.id,
  webhook_id: d.webhookId,
  team_id: d.teamId,
  event_id: d.eventId,
  event_type: d.eventType,
  ordering_key: d.orderingKey,
  payload: d.payload,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.nextAttemptAt,
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  attempt_log: JSON.stringify(d.attemptLog),
  created_at: d.createdAt,
  updated_at: d.updatedAt,
  delivered_at: d.deliveredAt,
});

/** Webhook endpoints and their outbox of deliveries. */
export class WebhookStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async insert(w: WebhookRecord): Promise<void> {
    await this.db.insertInto('webhooks').values(webhookToRow(w)).execute();
  }

  async update(w: WebhookRecord): Promise<void> {
    const { id: _id, team_id: _team, created_at: _c, ...rest } = webhookToRow(w);
    await this.db.updateTable('webhooks').set(rest).where('id', '=', w.id).execute();
  }

  /** Removes the endpoint and its deliveries (pending ones are not sent); false when the team has no such webhook. */
  async delete(teamId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const r = await tx.deleteFrom('webhooks').where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) return false;
      await tx.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
      return true;
    });
  }

  async get(teamId: string, id: string): Promise<WebhookRecord | undefined> {
    const row = await this.db.selectFrom('webhooks').selectAll().where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
    return row && webhookFromRow(row);
  }

  async list(teamId: string): Promise<WebhookRecord[]> {
    const rows = await this.db.selectFrom('webhooks').selectAll().where('team_id', '=', teamId).orderBy('created_at').orderBy('id').execute();
    return rows.map(webhookFromRow);
  }

  async count(teamId: string): Promise<number> {
    const r = await this.db
      .selectFrom('webhooks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team_id', '=', teamId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Every active endpoint, across teams: what new events are matched against. */
  async active(): Promise<WebhookRecord[]> {
    const rows = await this.db.selectFrom('webhooks').selectAll().where('active', '=', 1).execute();
    return rows.map(webhookFromRow);
  }

  async byIds(ids: string[]): Promise<Map<string, WebhookRecord>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('webhooks').selectAll().where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, webhookFromRow(r)]));
  }

  async cursor(log: LogName): Promise<number> {
    const r = await this.db.selectFrom('event_cursors').select('seq').where('name', '=', `webhooks:${log}`).executeTakeFirst();
    return Number(r?.seq ?? 0);
  }

  /** Events of a log after `after`, oldest first. */
  async read(log: LogName, after: number, limit: number): Promise<LoggedEvent[]> {
    if (log === 'sandbox_events') {
      const rows = await this.db.selectFrom('sandbox_events').select(['seq', 'team_id', 'sandbox_id', 'type', 'at', 'resource']).where('seq', '>', after).orderBy('seq').limit(limit).execute();
      return rows.map((r) => ({
        seq: Number(r.seq),
        teamId: r.team_id,
        type: r.type,
        at: Number(r.at),
        orderingKey: `sandbox:${r.sandbox_id}`,
        resource: r.resource ?? null,
        sandboxId: r.sandbox_id,
      }));
    }
    const rows = await this.db.selectFrom('resource_events').selectAll().where('seq', '>', after).orderBy('seq').limit(limit).execute();
    return rows.map((r) => ({ seq: Number(r.seq), teamId: r.team_id, type: r.type, at: Number(r.at), orderingKey: r.ordering_key, resource: r.resource }));
  }

  /**
   * Queues deliveries and moves the log's cursor from `from` to `to` in one transaction; false (and
   * nothing queued) when another replica moved it first.
   */
  async enqueue(log: LogName, from: number, to: number, deliveries: DeliveryRecord[]): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const moved = await tx.updateTable('event_cursors').set({ seq: to }).where('name', '=', `webhooks:${log}`).where('seq', '=', from).executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return false;
      for (let i = 0; i < deliveries.length; i += 200) {
        await tx
          .insertInto('webhook_deliveries')
          .values(deliveries.slice(i, i + 200).map(deliveryToRow))
          .execute();
      }
      return true;
    });
  }

  /** A delivery out of order (a test): queued at once. */
  async insertDelivery(d: DeliveryRecord): Promise<void> {
    await this.db.insertInto('webhook_deliveries').values(deliveryToRow(d)).execute();
  }

  /**
   * Pending deliveries due now that are first in line for their endpoint and ordering key (the
   * ones before them are delivered or given up), to active endpoints, oldest first.
   */
  async due(now: number, limit: number, skip: string[]): Promise<DeliveryRecord[]> {
    let q = this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .selectAll('d')
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', now)
      .where('w.active', '=', 1)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('webhook_deliveries as e')
              .select('e.n')
              .whereRef('e.webhook_id', '=', 'd.webhook_id')
              .whereRef('e.ordering_key', '=', 'd.ordering_key')
              .where('e.status', '=', 'pending')
              .whereRef('e.n', '<', 'd.n'),
          ),
        ),
      );
    if (skip.length > 0) q = q.where('d.id', 'not in', skip);
    const rows = await q.orderBy('d.n').limit(limit).execute();
    return rows.map(deliveryFromRow);
  }

  /** Records an attempt's outcome. */
  async settle(d: DeliveryRecord): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set({
        status: d.status,
        attempts: d.attempts,
        next_attempt_at: d.nextAttemptAt,
        last_status_code: d.lastStatusCode,
        last_error: d.lastError,
        attempt_log: JSON.stringify(d.attemptLog),
        updated_at: d.updatedAt,
        delivered_at: d.deliveredAt,
      })
      .where('id', '=', d.id)
      .execute();
  }

  /** An endpoint's deliveries, newest first. */
  async deliveries(webhookId: string, f: { status?: string; after?: Keyset; limit: number }): Promise<(DeliveryRecord & Keyset)[]> {
    let q = this.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.after) {
      const { createdAt, id } = f.after;
      q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(createdAt, id)));
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
    return rows.map((r) => ({ ...deliveryFromRow(r), createdAt: Number(r.created_at) }));
  }

  /** Drops settled deliveries last changed before `before`. */
  async prune(before: number): Promise<void> {
    await this.db.deleteFrom('webhook_deliveries').where('status', '<>', 'pending').where('updated_at', '<', before).execute();
  }
}
