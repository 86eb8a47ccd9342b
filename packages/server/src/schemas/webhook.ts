import { type Static, Type } from 'typebox';
import { DateTime } from './common.ts';

const EVENTS_DOC =
  'Event types to receive: sandbox.created, sandbox.paused, sandbox.resumed, sandbox.deleted, sandbox.failed, sandbox.auto_paused, sandbox.auto_deleted, snapshot.ready, snapshot.failed, template.built, template.failed; or * for all';

const fields = {
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: 'http(s) URL; loopback, link-local, private and platform addresses are refused (400) unless SANDPIT_WEBHOOK_ALLOW_HOSTS lists its host:port',
  }),
  events: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 32, description: EVENTS_DOC }),
  secret: Type.String({ minLength: 16, maxLength: 256, description: 'Signing secret (HMAC-SHA256, header X-Sandpit-Signature); default: one is generated and answered once' }),
  description: Type.String({ maxLength: 256 }),
  active: Type.Boolean({ description: 'Inactive: no new deliveries are queued and queued ones wait' }),
};

export const CreateWebhookBody = Type.Object(
  { url: fields.url, events: fields.events, secret: Type.Optional(fields.secret), description: Type.Optional(fields.description), active: Type.Optional(fields.active) },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const PatchWebhookBody = Type.Object(
  {
    url: Type.Optional(fields.url),
    events: Type.Optional(fields.events),
    secret: Type.Optional(fields.secret),
    description: Type.Optional(Type.Union([fields.description, Type.Null()])),
    active: Type.Optional(fields.active),
  },
  { additionalProperties: false },
);
export type PatchWebhookBody = Static<typeof PatchWebhookBody>;

export const Webhook = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Type.Optional(Type.String()),
    active: Type.Boolean(),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { $id: 'Webhook' },
);
export type Webhook = Static<typeof Webhook>;

export const WebhookWithSecret = Type.Object({ ...Webhook.properties, secret: Type.String({ description: 'The signing secret: shown once' }) });

export const WebhookIdParam = Type.Object({ webhook_id: Type.String() });
export type WebhookIdParam = Static<typeof WebhookIdParam>;

export const WebhookDelivery = Type.Object(
  {
    id: Type.String(),
    webhook_id: Type.String(),
    event_id: Type.String({ description: 'The same on every attempt and on every endpoint: receivers deduplicate with it' }),
    event_type: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
      description: 'pending: queued or being retried; delivered: answered 2xx; failed: no 2xx within 24 h',
    }),
    attempts: Type.Integer(),
    last_status_code: Type.Optional(Type.Integer({ description: 'HTTP status of the last attempt (absent when it got no answer)' })),
    last_error: Type.Optional(Type.String({ description: 'Why the last attempt got no answer (timeout, connection refused, ...)' })),
    next_attempt_at: Type.Optional(DateTime),
    created_at: DateTime,
    delivered_at: Type.Optional(DateTime),
    attempt_log: Type.Array(Type.Object({ at: DateTime, status_code: Type.Optional(Type.Integer()), error: Type.Optional(Type.String()), duration_ms: Type.Integer() }), {
      description: 'The last 50 attempts, oldest first',
    }),
  },
  { $id: 'WebhookDelivery' },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const DeliveryList = Type.Object({ deliveries: Type.Array(Type.Ref('WebhookDelivery')), next_cursor: Type.Optional(Type.String()) });

export const DeliveriesQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ description: 'Page size, 1 to 1000 (default 100)' })),
    cursor: Type.Optional(Type.String()),
    status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')])),
  },
  { additionalProperties: false },
);
export type DeliveriesQuery = Static<typeof DeliveriesQuery>;
