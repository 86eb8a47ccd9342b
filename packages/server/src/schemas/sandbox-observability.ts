import { type Static, Type } from 'typebox';
import { DateTime, Resources } from './common.ts';

const Nullable = (t: ReturnType<typeof Type.Number>) => Type.Union([t, Type.Null()]);

export const MetricsQuery = Type.Object({
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Only points at or after this time (for polling)' })),
});
export type MetricsQuery = Static<typeof MetricsQuery>;

export const MetricPoint = Type.Object({
  at: DateTime,
  cpu_percent: Nullable(Type.Number({ description: 'Share of one CPU over the last interval (200 = two CPUs busy); null without a previous sample' })),
  memory_bytes: Type.Number({ description: 'Memory charged to the sandbox cgroup' }),
  disk_bytes: Type.Number({ description: 'Bytes written to the sandbox disk layer' }),
  net_rx_bytes: Nullable(Type.Number({ description: 'Bytes received by the sandbox since its network came up' })),
  net_tx_bytes: Nullable(Type.Number({ description: 'Bytes sent by the sandbox since its network came up' })),
  net_rx_rate: Nullable(Type.Number({ description: 'Bytes per second received over the last interval' })),
  net_tx_rate: Nullable(Type.Number({ description: 'Bytes per second sent over the last interval' })),
});

export const SandboxMetricsResponse = Type.Object({
  sandbox_id: Type.String(),
  interval_ms: Type.Integer({ description: 'Time between samples; a paused sandbox is not sampled, so the series has gaps' }),
  window_ms: Type.Integer({ description: 'How far back points are kept (in memory: a server restart starts afresh)' }),
  resources: Resources,
  points: Type.Array(MetricPoint),
});

export const EventsQuery = Type.Object({
  after: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'Only events with a larger seq (for polling)' })),
  limit: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: '1 to 1000, default 200' })),
});
export type EventsQuery = Static<typeof EventsQuery>;

export const SandboxEvent = Type.Object({
  seq: Type.Integer({ description: 'Increasing across the installation' }),
  type: Type.String({ description: 'created, updated, paused, auto_paused, resumed, snapshot, failed, reconciled_active, reconciled_paused, deleted, auto_deleted' }),
  at: DateTime,
  reason: Type.String({ description: 'Why it happened, in words' }),
  data: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
});
export type SandboxEvent = Static<typeof SandboxEvent>;

export const SandboxEventList = Type.Object({ events: Type.Array(SandboxEvent) });
