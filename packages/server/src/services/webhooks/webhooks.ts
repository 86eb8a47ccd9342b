import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { type Clock, iso } from '../../clock.ts';
import { badRequest, conflict, notFound } from '../../errors.ts';
import { isUuid, newId, timeOrderedId } from '../../ids.ts';
import type { CreateWebhookBody, DeliveriesQuery, PatchWebhookBody, Webhook, WebhookDelivery } from '../../schemas/webhook.ts';
import type { DeliveryRecord, WebhookRecord, WebhookStore } from '../../store/webhooks.ts';
import type { Principal } from '../access/principal.ts';
import { keysetPage } from '../paging.ts';
import { EVENT_TYPES, TEST_EVENT } from './events.ts';
import type { UrlGuard } from './url-guard.ts';

/** Endpoints a team may register. */
const MAX_PER_TEAM = 25;

export interface WebhookServiceDeps {
  store: WebhookStore;
  guard: UrlGuard;
  clock: Clock;
  /** The secrets key: signing secrets are kept encrypted under it. */
  key: Buffer;
  /** Asks the dispatcher to look for due deliveries now (a test delivery was queued). */
  wake: () => void;
}

/** A team's webhook endpoints: registration (URLs checked against SSRF), test deliveries, the delivery record. */
export class WebhookService {
  readonly deps: WebhookServiceDeps;
  constructor(deps: WebhookServiceDeps) {
    this.deps = deps;
  }

  async create(p: Principal, body: CreateWebhookBody): Promise<{ webhook: WebhookRecord; secret: string }> {
    const url = await this.deps.guard.check(body.url);
    if ((await this.deps.store.count(p.teamId)) >= MAX_PER_TEAM) throw conflict(`a team has at most ${MAX_PER_TEAM} webhooks`);
    const now = this.deps.clock.now();
    const id = newId();
    const secret = body.secret ?? `whsec_${randomBytes(24).toString('base64url')}`;
    const webhook: WebhookRecord = {
      id,
      teamId: p.teamId,
      url: url.href,
      events: eventsOf(body.events),
      description: body.description ?? null,
      secret: this.#encrypt(id, secret),
      active: body.active ?? true,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.store.insert(webhook);
    return { webhook, secret };
  }

  list(p: Principal): Promise<WebhookRecord[]> {
    return this.deps.store.list(p.teamId);
  }

  async get(p: Principal, id: string): Promise<WebhookRecord> {
    const w = isUuid(id) ? await this.deps.store.get(p.teamId, id.toLowerCase()) : undefined;
    if (!w) throw notFound(`webhook '${id.slice(0, 100)}' not found`);
    return w;
  }

  async patch(p: Principal, id: string, body: PatchWebhookBody): Promise<WebhookRecord> {
    const w = await this.get(p, id);
    if (body.url !== undefined) w.url = (await this.deps.guard.check(body.url)).href;
    if (body.events !== undefined) w.events = eventsOf(body.events);
    if (body.secret !== undefined) w.secret = this.#encrypt(w.id, body.secret);
    if (body.description !== undefined) w.description = body.description;
    if (body.active !== undefined) w.active = body.active;
    w.updatedAt = this.deps.clock.now();
    await this.deps.store.update(w);
    return w;
  }

  async delete(p: Principal, id: string): Promise<void> {
    const w = await this.get(p, id);
    await this.deps.store.delete(p.teamId, w.id);
  }

  /** Queues a `webhook.test` delivery to the endpoint (signed and retried like any other) and wakes the dispatcher. */
  async test(p: Principal, id: string): Promise<DeliveryRecord> {
    const w = await this.get(p, id);
    const now = this.deps.clock.now();
    const eventId = `evt_test_${randomBytes(8).toString('hex')}`;
    const payload = JSON.stringify({ id: eventId, type: TEST_EVENT, time: iso(now), team_id: w.teamId, data: { webhook_id: w.id } });
    const d = newDelivery(w, { eventId, eventType: TEST_EVENT, orderingKey: `test:${w.id}`, payload }, now);
    await this.deps.store.insertDelivery(d);
    this.deps.wake();
    return d;
  }

  async deliveries(p: Principal, id: string, q: DeliveriesQuery): Promise<{ items: DeliveryRecord[]; nextCursor?: string }> {
    const w = await this.get(p, id);
    return keysetPage(q, (after, limit) => this.deps.store.deliveries(w.id, { status: q.status, after, limit }));
  }

  /** The plain signing secret, for the dispatcher. */
  secretOf(w: WebhookRecord): string {
    const raw = Buffer.from(w.secret.slice(3), 'base64');
    const d = createDecipheriv('aes-256-gcm', this.deps.key, raw.subarray(0, 12));
    d.setAAD(Buffer.from(`webhook:${w.id}`));
    d.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
  }

  #encrypt(id: string, secret: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.deps.key, iv);
    c.setAAD(Buffer.from(`webhook:${id}`));
    const ct = Buffer.concat([c.update(secret, 'utf8'), c.final()]);
    return `v1:${Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64')}`;
  }
}

function eventsOf(events: string[]): string[] {
  for (const e of events) {
    if (e !== '*' && !(EVENT_TYPES as readonly string[]).includes(e)) throw badRequest(`unknown event type '${e.slice(0, 64)}'; known: ${EVENT_TYPES.join(', ')} (or * for all)`);
  }
  return [...new Set(events)];
}

export function newDelivery(w: WebhookRecord, e: { eventId: string; eventType: string; orderingKey: string; payload: string }, now: number): DeliveryRecord {
  return {
    id: timeOrderedId(now),
    webhookId: w.id,
    teamId: w.teamId,
    eventId: e.eventId,
    eventType: e.eventType,
    orderingKey: e.orderingKey,
    payload: e.payload,
    status: 'pending',
    attempts: 0,
    nextAttemptAt: now,
    lastStatusCode: null,
    lastError: null,
    attemptLog: [],
    createdAt: now,
    updatedAt: now,
    deliveredAt: null,
  };
}

export function webhookView(w: WebhookRecord): Webhook {
  const v: Webhook = { id: w.id, url: w.url, events: w.events, active: w.active, created_at: iso(w.createdAt), updated_at: iso(w.updatedAt) };
  if (w.description !== null) v.description = w.description;
  return v;
}

export function deliveryView(d: DeliveryRecord): WebhookDelivery {
  const v: WebhookDelivery = {
    id: d.id,
    webhook_id: d.webhookId,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    created_at: iso(d.createdAt),
    attempt_log: d.attemptLog.map((a) => ({
      at: iso(a.at),
      duration_ms: a.durationMs,
      ...(a.statusCode !== undefined ? { status_code: a.statusCode } : {}),
      ...(a.error !== undefined ? { error: a.error } : {}),
    })),
  };
  if (d.lastStatusCode !== null) v.last_status_code = d.lastStatusCode;
  if (d.lastError !== null) v.last_error = d.lastError;
  if (d.status === 'pending') v.next_attempt_at = iso(d.nextAttemptAt);
  if (d.deliveredAt !== null) v.delivered_at = iso(d.deliveredAt);
  return v;
}
