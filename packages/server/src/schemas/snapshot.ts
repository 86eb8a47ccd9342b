import { type Static, Type } from 'typebox';
import { DateTime, Resources } from './common.ts';

export const SnapshotStatus = Type.Union([Type.Literal('creating'), Type.Literal('ready'), Type.Literal('failed'), Type.Literal('deleting')]);

export const Snapshot = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    sandbox_id: Type.String({ format: 'uuid', description: 'Bare UUID of the sandbox it was taken from; that sandbox may since have been deleted' }),
    template_id: Type.Union([Type.String(), Type.Null()], { description: 'Template the captured sandbox was created from' }),
    kind: Type.Literal('mem+fs', { description: 'Memory and disk' }),
    status: SnapshotStatus,
    name: Type.Union([Type.String(), Type.Null()]),
    size_bytes: Type.Integer({ format: 'int64', description: 'Bytes held on disk (memory image and disk layer), copies kept on other nodes included; 0 until ready' }),
    resources: Resources,
    created_at: DateTime,
    ready_at: Type.Union([DateTime, Type.Null()]),
  },
  { $id: 'Snapshot', description: 'Kept until deleted; outlives the sandbox it came from. Start a sandbox from it with POST /sandboxes {from_snapshot}.' },
);
export type Snapshot = Static<typeof Snapshot>;

export const CreateSnapshotBody = Type.Object(
  {
    kind: Type.Optional(Type.Literal('mem+fs', { description: 'Default mem+fs (memory and disk); a disk-only kind is not offered yet' })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    idempotency_key: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'Unique per sandbox: a retry with the same key returns what the first request made (200), or 410 once it was deleted' }),
    ),
  },
  { additionalProperties: false },
);
export type CreateSnapshotBody = Static<typeof CreateSnapshotBody>;

export const PatchSnapshotBody = Type.Object(
  { name: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], { description: 'null removes the label' }) },
  { additionalProperties: false },
);
export type PatchSnapshotBody = Static<typeof PatchSnapshotBody>;

export const SnapshotIdParam = Type.Object({ snapshot_id: Type.String({ description: 'Snapshot UUID' }) });
export type SnapshotIdParam = Static<typeof SnapshotIdParam>;

export const ListSnapshotsQuery = Type.Object(
  {
    sandbox_id: Type.Optional(Type.String({ description: 'Only snapshots of this sandbox (UUID or sb-<region>-<uuid>)' })),
    limit: Type.Optional(Type.String({ description: 'Page size, 1 to 1000 (default 100)' })),
    cursor: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type ListSnapshotsQuery = Static<typeof ListSnapshotsQuery>;

export const SnapshotList = Type.Object({
  snapshots: Type.Array(Type.Ref('Snapshot')),
  next_cursor: Type.Optional(Type.String()),
});
