/** The event types a webhook subscribes to (dotted names); `*` subscribes to every one. */
export const EVENT_TYPES = [
  'sandbox.created',
  'sandbox.paused',
  'sandbox.resumed',
  'sandbox.deleted',
  'sandbox.failed',
  'sandbox.auto_paused',
  'sandbox.auto_deleted',
  'snapshot.ready',
  'snapshot.failed',
  'template.built',
  'template.failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** sandbox_events types -> webhook event types; the others (updated, snapshot, reconciled_*) send nothing. */
export const SANDBOX_EVENT_TYPES: Record<string, EventType> = {
  created: 'sandbox.created',
  paused: 'sandbox.paused',
  resumed: 'sandbox.resumed',
  deleted: 'sandbox.deleted',
  failed: 'sandbox.failed',
  auto_paused: 'sandbox.auto_paused',
  auto_deleted: 'sandbox.auto_deleted',
};

/** The test delivery's type (POST /webhooks/{id}/test). */
export const TEST_EVENT = 'webhook.test';

export const subscribes = (events: readonly string[], type: string) => type === TEST_EVENT || events.includes('*') || events.includes(type);
