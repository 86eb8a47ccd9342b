import type { HttpClient, RequestOptions } from './http.ts';
import type { CreatedWebhook, CreateWebhookParams, UpdateWebhookParams, Webhook, WebhookDelivery, WebhookDeliveryPage } from './types.ts';

export interface ListDeliveriesFilters {
  status?: 'pending' | 'delivered' | 'failed';
  limit?: number;
  cursor?: string;
}

/**
 * The team's webhook endpoints (the `webhooks:manage` permission): lifecycle events POSTed as signed
 * JSON, retried for 24 h, in order per sandbox. Check deliveries with `verifyWebhook` (`@sandpit/sdk`).
 */
export class Webhooks {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /** Registers an endpoint; without `secret` one is generated and answered only here. */
  create(params: CreateWebhookParams, opts: RequestOptions = {}): Promise<CreatedWebhook> {
    return this.#http.json({ method: 'POST', path: '/webhooks', body: params, ...opts });
  }

  async list(opts: RequestOptions = {}): Promise<Webhook[]> {
    return (await this.#http.json<{ webhooks: Webhook[] }>({ method: 'GET', path: '/webhooks', ...opts })).webhooks;
  }

  get(webhookId: string, opts: RequestOptions = {}): Promise<Webhook> {
    return this.#http.json({ method: 'GET', path: `/webhooks/${encodeURIComponent(webhookId)}`, ...opts });
  }

  update(webhookId: string, params: UpdateWebhookParams, opts: RequestOptions = {}): Promise<Webhook> {
    return this.#http.json({ method: 'PATCH', path: `/webhooks/${encodeURIComponent(webhookId)}`, body: params, ...opts });
  }

  delete(webhookId: string, opts: RequestOptions = {}): Promise<void> {
    return this.#http.json({ method: 'DELETE', path: `/webhooks/${encodeURIComponent(webhookId)}`, ...opts });
  }

  /** Queues a `webhook.test` delivery to the endpoint; follow it in `deliveries`. */
  test(webhookId: string, opts: RequestOptions = {}): Promise<WebhookDelivery> {
    return this.#http.json({ method: 'POST', path: `/webhooks/${encodeURIComponent(webhookId)}/test`, ...opts });
  }

  /** The endpoint's deliveries, newest first, a page at a time. */
  async *deliveries(webhookId: string, filters: ListDeliveriesFilters = {}, opts: RequestOptions = {}): AsyncGenerator<WebhookDelivery[]> {
    let cursor = filters.cursor;
    do {
      const query = new URLSearchParams();
      if (filters.status !== undefined) query.set('status', filters.status);
      if (filters.limit !== undefined) query.set('limit', String(filters.limit));
      if (cursor !== undefined) query.set('cursor', cursor);
      const page = await this.#http.json<WebhookDeliveryPage>({ method: 'GET', path: `/webhooks/${encodeURIComponent(webhookId)}/deliveries`, query, ...opts });
      yield page.deliveries;
      cursor = page.next_cursor;
    } while (cursor !== undefined);
  }
}

/**
 * Checks a delivery's `X-Sandpit-Signature` (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`)
 * with Web Crypto (Node 20+, Bun, browsers): true when it was signed with `secret` at most
 * `toleranceS` seconds from now. Pass the body exactly as received.
 */
export async function verifyWebhook(secret: string, signatureHeader: string, rawBody: string, toleranceS = 300, nowS = Date.now() / 1000): Promise<boolean> {
  const parts = new Map(signatureHeader.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = parts.get('t');
  const v1 = parts.get('v1');
  if (!t || !v1 || !/^\d+$/.test(t) || Math.abs(nowS - Number(t)) > toleranceS) return false;
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, enc.encode(`${t}.${rawBody}`)));
  const want = Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('');
  if (want.length !== v1.length) return false;
  let diff = 0;
  for (let i = 0; i < want.length; i++) diff |= want.charCodeAt(i) ^ v1.charCodeAt(i);
  return diff === 0;
}
