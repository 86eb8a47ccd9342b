import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Logger } from 'pino';
import { type Clock, iso } from '../../clock.ts';
import { type DeliveryRecord, LOGS, type LogName, type LoggedEvent, type WebhookRecord, type WebhookStore } from '../../store/webhooks.ts';
import { SANDBOX_EVENT_TYPES, subscribes } from './events.ts';
import { SIGNATURE_HEADER, sign } from './signature.ts';
import type { UrlGuard } from './url-guard.ts';
import { newDelivery, type WebhookService } from './webhooks.ts';

/** Events read from a log per statement. */
const BATCH = 500;
/** Requests in flight from this replica, and to one endpoint. */
const MAX_IN_FLIGHT = 64;
const PER_WEBHOOK = 16;
/** Retries: 5 s, 10 s, 20 s, ... at most an hour apart, for 24 h after the event; then the delivery has failed. */
const FIRST_RETRY_MS = 5000;
const MAX_RETRY_MS = 3_600_000;
export const RETRY_FOR_MS = 24 * 3_600_000;
const ATTEMPTS_KEPT = 50;
/** Settled deliveries are kept this long for GET /webhooks/{id}/deliveries. */
const KEEP_SETTLED_MS = 30 * 24 * 3_600_000;
const PRUNE_EVERY_MS = 3_600_000;

export interface DispatcherDeps {
  store: WebhookStore;
  service: WebhookService;
  guard: UrlGuard;
  clock: Clock;
  log: Logger;
  /** True while this replica holds the webhooks lease: only the holder queues and sends. */
  held: () => Promise<boolean>;
  /** An attempt with no answer by then is retried. */
  timeoutMs: number;
  /** How often the outbox is looked at without being woken. */
  intervalMs: number;
  /** Which bound secrets of these sandboxes are revoked (a sandbox's `secrets[].revoked`, read when its events are queued). */
  revokedSecrets: (sandboxIds: string[]) => Promise<Map<string, Set<string>>>;
}

/**
 * The webhook outbox, run by one API replica at a time. Each run turns new lifecycle events (read
 * from their logs by cursor, moved in the transaction that queues their deliveries) into one
 * delivery per subscribed endpoint, then sends what is due: per endpoint and ordering key (a
 * sandbox) only the oldest pending delivery, so events arrive in order; many keys and endpoints at
 * once, so a slow or hanging receiver holds up only its own queue, and never an API request (no
 * request waits on the outbox). A delivery stays pending in the store until answered 2xx, so a
 * restart or another replica taking over sends it again: at least once.
 */
export class WebhookDispatcher {
  readonly deps: DispatcherDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #closed = false;
  readonly #inFlight = new Map<string, { abort: AbortController; done: Promise<void> }>();
  readonly #perWebhook = new Map<string, number>();
  #lastPrune = 0;

  constructor(deps: DispatcherDeps) {
    this.deps = deps;
  }

  start(): void {
    this.#timer = setInterval(() => this.wake(), this.deps.intervalMs);
    this.#timer.unref();
    this.wake();
  }

  /** Runs the outbox now (or right after the run in progress). */
  wake(): void {
    if (this.#closed) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#run()
      .catch((err) => this.deps.log.warn({ err: String(err) }, 'webhook outbox run failed'))
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  async #run(): Promise<void> {
    if (!(await this.deps.held())) return;
    await this.pump();
    await this.#dispatch();
    const now = this.deps.clock.now();
    if (now - this.#lastPrune >= PRUNE_EVERY_MS) {
      this.#lastPrune = now;
      await this.deps.store.prune(now - KEEP_SETTLED_MS);
    }
  }

  /** Queues deliveries for every event logged since the last run. */
  async pump(): Promise<void> {
    let hooks: WebhookRecord[] | undefined;
    for (const log of LOGS) {
      for (;;) {
        const from = await this.deps.store.cursor(log);
        const events = await this.deps.store.read(log, from, BATCH);
        if (events.length === 0) break;
        hooks ??= await this.deps.store.active();
        const now = this.deps.clock.now();
        if (hooks.length > 0) await this.#markRevoked(events);
        const deliveries = hooks.length === 0 ? [] : events.flatMap((e) => this.#deliveriesFor(log, e, hooks!, now));
        if (!(await this.deps.store.enqueue(log, from, events[events.length - 1]!.seq, deliveries))) break;
        if (events.length < BATCH) break;
      }
    }
  }

  /** A sandbox kept with its event says no secret is revoked: revocations are read from the store here, as GET does. */
  async #markRevoked(events: LoggedEvent[]): Promise<void> {
    const withSecrets = events.filter((e) => e.sandboxId && e.resource?.includes('"secrets":[{'));
    if (withSecrets.length === 0) return;
    const revoked = await this.deps.revokedSecrets([...new Set(withSecrets.map((e) => e.sandboxId!))]);
    for (const e of withSecrets) {
      const names = revoked.get(e.sandboxId!);
      if (!names) continue;
      const view = JSON.parse(e.resource!) as { secrets: { secret: string; revoked: boolean }[] };
      for (const b of view.secrets) b.revoked = names.has(b.secret);
      e.resource = JSON.stringify(view);
    }
  }

  #deliveriesFor(log: LogName, e: LoggedEvent, hooks: WebhookRecord[], now: number): DeliveryRecord[] {
    const type = log === 'sandbox_events' ? SANDBOX_EVENT_TYPES[e.type] : e.type;
    if (!type || e.resource === null) return [];
    // An endpoint hears only what happened after it was registered, though the outbox may read older events later.
    const targets = hooks.filter((w) => w.teamId === e.teamId && w.createdAt <= e.at && subscribes(w.events, type));
    if (targets.length === 0) return [];
    // The same id on every endpoint and attempt: receivers deduplicate with it.
    const eventId = `evt_${log === 'sandbox_events' ? 'sb' : 'rs'}_${e.seq}`;
    const payload = `{"id":${JSON.stringify(eventId)},"type":${JSON.stringify(type)},"time":"${iso(e.at)}","team_id":${JSON.stringify(e.teamId)},"data":${e.resource}}`;
    return targets.map((w) => newDelivery(w, { eventId, eventType: type, orderingKey: e.orderingKey, payload }, now));
  }

  async #dispatch(): Promise<void> {
    const free = MAX_IN_FLIGHT - this.#inFlight.size;
    if (free <= 0) return;
    const due = await this.deps.store.due(this.deps.clock.now(), free * 2, [...this.#inFlight.keys()]);
    if (due.length === 0) return;
    const hooks = await this.deps.store.byIds([...new Set(due.map((d) => d.webhookId))]);
    for (const d of due) {
      const w = hooks.get(d.webhookId);
      const busy = this.#perWebhook.get(d.webhookId) ?? 0;
      if (!w || busy >= PER_WEBHOOK || this.#inFlight.size >= MAX_IN_FLIGHT) continue;
      this.#perWebhook.set(d.webhookId, busy + 1);
      const abort = new AbortController();
      const done = this.#attempt(d, w, abort.signal)
        .catch((err) => this.deps.log.warn({ delivery: d.id, err: String(err) }, 'webhook delivery not recorded'))
        .finally(() => {
          this.#inFlight.delete(d.id);
          const n = (this.#perWebhook.get(d.webhookId) ?? 1) - 1;
          if (n > 0) this.#perWebhook.set(d.webhookId, n);
          else this.#perWebhook.delete(d.webhookId);
          this.wake();
        });
      this.#inFlight.set(d.id, { abort, done });
    }
  }

  async #attempt(d: DeliveryRecord, w: WebhookRecord, signal: AbortSignal): Promise<void> {
    const started = performance.now();
    const sentAt = this.deps.clock.now();
    let secret: string;
    try {
      secret = this.deps.service.secretOf(w);
    } catch {
      // Recorded and retried like a failed send, not retried at once in a loop.
      return this.#settle(d, started, { error: "the endpoint's signing secret cannot be read with this replica's SANDPIT_SECRETS_KEY (every replica needs the same key)" });
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Sandpit-Webhooks/1.0',
      [SIGNATURE_HEADER]: sign(secret, Math.floor(sentAt / 1000), d.payload),
      'x-sandpit-event-id': d.eventId,
      'x-sandpit-event-type': d.eventType,
      'x-sandpit-delivery-id': d.id,
      'x-sandpit-delivery-attempt': String(d.attempts + 1),
    };
    const outcome = await this.#post(new URL(w.url), d.payload, headers, signal);
    // Shut down mid-attempt: it stays pending and is sent again.
    if (signal.aborted) return;
    await this.#settle(d, started, outcome);
  }

  /** Records an attempt's outcome: delivered on 2xx, else retried with backoff until 24 h after the event, then failed. */
  async #settle(d: DeliveryRecord, started: number, outcome: { statusCode?: number; error?: string }): Promise<void> {
    const at = this.deps.clock.now();
    d.attempts += 1;
    d.attemptLog = [...d.attemptLog, { at, durationMs: Math.round(performance.now() - started), ...outcome }].slice(-ATTEMPTS_KEPT);
    d.lastStatusCode = outcome.statusCode ?? null;
    d.lastError = outcome.error ?? null;
    d.updatedAt = at;
    if (outcome.statusCode !== undefined && outcome.statusCode >= 200 && outcome.statusCode < 300) {
      d.status = 'delivered';
      d.deliveredAt = at;
    } else if (at - d.createdAt >= RETRY_FOR_MS) {
      d.status = 'failed';
    } else {
      d.nextAttemptAt = at + Math.min(FIRST_RETRY_MS * 2 ** (d.attempts - 1), MAX_RETRY_MS);
    }
    await this.deps.store.settle(d);
  }

  /** One POST: the status it was answered with, or why there was none. Redirects are not followed. */
  async #post(url: URL, body: string, headers: Record<string, string>, signal: AbortSignal): Promise<{ statusCode?: number; error?: string }> {
    let pinned: { address: string; family: number };
    try {
      pinned = await this.deps.guard.resolve(url);
    } catch (err) {
      return { error: (err as Error).message.slice(0, 300) };
    }
    const lookup: LookupFunction = (_host, opts, cb) => {
      if (opts.all) (cb as (err: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
      else cb(null, pinned.address, pinned.family);
    };
    return new Promise((resolve) => {
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, lookup, signal });
      const timer = setTimeout(() => req.destroy(new Error(`timeout: no answer within ${this.deps.timeoutMs} ms`)), this.deps.timeoutMs);
      const finish = (r: { statusCode?: number; error?: string }) => {
        clearTimeout(timer);
        resolve(r);
      };
      req.on('response', (res: IncomingMessage) => {
        // The answer's status is all that counts; its body is read and dropped so the socket is freed.
        res.resume();
        finish({ statusCode: res.statusCode ?? 0 });
      });
      req.on('error', (err: NodeJS.ErrnoException) => finish({ error: (err.code && !err.message.includes(err.code) ? `${err.code}: ${err.message}` : err.message).slice(0, 300) }));
      req.end(body);
    });
  }

  /** Stops: attempts in flight are abandoned (they stay pending and go out again later). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#running;
    for (const { abort } of this.#inFlight.values()) abort.abort();
    await Promise.all([...this.#inFlight.values()].map((f) => f.done));
  }
}
