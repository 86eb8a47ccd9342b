import { type Static, Type } from 'typebox';

/** Internal API between nodes and API replicas (hidden from the public OpenAPI document). */
export const NodeReport = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }),
    region: Type.String({ pattern: '^[a-z0-9]+$' }),
    url: Type.String({ minLength: 1, maxLength: 512 }),
    vcpus: Type.Integer({ minimum: 1 }),
    memory_mib: Type.Integer({ minimum: 1 }),
    disk_mib: Type.Integer({ minimum: 0 }),
    max_sandboxes: Type.Integer({ minimum: 0 }),
    engines: Type.Array(Type.String(), { maxItems: 8 }),
    labels: Type.Record(Type.String(), Type.String(), { maxProperties: 64 }),
    templates: Type.Array(Type.String(), { maxItems: 10_000 }),
    allocated: Type.Object({ sandboxes: Type.Integer({ minimum: 0 }), vcpus: Type.Integer({ minimum: 0 }), memory_mib: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);
export type NodeReport = Static<typeof NodeReport>;

export const HeartbeatAnswer = Type.Object({ reconcile: Type.Boolean({ description: 'The node had been marked lost: it must reconcile with the store' }) });

export const NodeView = Type.Object({
  id: Type.String(),
  region: Type.String(),
  url: Type.String(),
  state: Type.Union([Type.Literal('ready'), Type.Literal('cordoned'), Type.Literal('draining'), Type.Literal('lost')]),
  vcpus: Type.Integer(),
  memory_mib: Type.Integer(),
  disk_mib: Type.Integer(),
  max_sandboxes: Type.Integer(),
  labels: Type.Record(Type.String(), Type.String()),
  engines: Type.Array(Type.String()),
  templates: Type.Integer({ description: 'Template versions whose files it holds' }),
  heartbeat_at: Type.String({ format: 'date-time' }),
  sandboxes: Type.Integer(),
  allocated_vcpus: Type.Integer(),
  allocated_memory_mib: Type.Integer(),
  sandbox_list: Type.Optional(Type.Array(Type.Object({ id: Type.String(), status: Type.String() }), { description: "Its live sandboxes, with ?sandboxes=true (the operator's cluster status)" })),
});
export type NodeView = Static<typeof NodeView>;

export const NodeList = Type.Object({ nodes: Type.Array(NodeView) });

/** How a node reports holding a copy of snapshot `id` among the content it reports (`templates`, beside template version keys). */
export const snapshotCopyKey = (id: string) => `snapshot:${id}`;
export const isSnapshotCopyKey = (key: string) => key.startsWith(snapshotCopyKey(''));
export const NodeListQuery = Type.Object({ sandboxes: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])) });

export const NodeActionParams = Type.Object({
  node_id: Type.String({ minLength: 1, maxLength: 64 }),
  action: Type.Union([Type.Literal('cordon'), Type.Literal('uncordon'), Type.Literal('drain')]),
});
export type NodeActionParams = Static<typeof NodeActionParams>;

/** What a drain did: paused sandboxes moved to other nodes, and what stays (running ones are not moved; failed moves are named). */
export const DrainAnswer = Type.Object({
  moved: Type.Array(Type.Object({ id: Type.String(), to: Type.String() })),
  left: Type.Integer({ minimum: 0 }),
  failed: Type.Array(Type.Object({ id: Type.String(), message: Type.String() })),
});
export type DrainAnswer = Static<typeof DrainAnswer>;
