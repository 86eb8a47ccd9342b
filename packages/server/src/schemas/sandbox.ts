import { type Static, Type } from 'typebox';
import { DateTime, Resources } from './common.ts';
import { VolumeMount } from './volume.ts';

const METADATA_DOC = 'At most 64 keys, keys at most 256 bytes, values at most 2048 bytes, 16384 bytes serialized; keys starting with platform. or _platform (any case) are reserved';

export const Metadata = Type.Record(Type.String(), Type.String(), { maxProperties: 64, description: METADATA_DOC });

export const NetworkRules = Type.Object(
  {
    allow_out: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
        maxItems: 256,
        description: 'CIDRs and domain names (wildcard *.<domain>); when present everything else is denied',
      }),
    ),
    deny_out: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 256, description: 'CIDRs only' })),
  },
  { additionalProperties: false, description: '10/8, 172.16/12, 192.168/16, 127/8 and 169.254/16 are always blocked' },
);

export const EnvVars = Type.Record(Type.String(), Type.String(), { maxProperties: 256 });

export const SecretBindings = Type.Record(Type.String(), Type.String(), {
  maxProperties: 64,
  description: 'env-var name -> secret name; the sandbox sees only a proxy token',
});

const AutoPauseKeepMemory = Type.Boolean({
  description: 'false: an auto-pause keeps only the disk (processes end; resume boots afresh, as POST /pause with keep_memory false). Default true.',
});

export const CreateSandboxBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    region: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Region the sandbox lives in (GET /info lists them); default: the region of the API that answers' })),
    from_template: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Template UUID or name; default platform/base' })),
    from_snapshot: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'Snapshot UUID (status ready): the new sandbox is a fork whose processes continue from the snapshot, with its disk, environment, template and resources. ' +
          'Several forks of one snapshot run independently. Not combinable with from_template, env or secrets. 503 on hosts whose driver cannot snapshot.',
      }),
    ),
    auto_pause_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 604800 })),
    auto_delete_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 2592000 })),
    auto_pause_keep_memory: Type.Optional(AutoPauseKeepMemory),
    metadata: Type.Optional(Metadata),
    env: Type.Optional(EnvVars),
    network: Type.Optional(NetworkRules),
    secrets: Type.Optional(SecretBindings),
    preview_access: Type.Optional(Type.Union([Type.Literal('public'), Type.Literal('private')])),
    volumes: Type.Optional(
      Type.Array(VolumeMount, {
        maxItems: 16,
        description: 'Volumes to mount (docs/volumes.md). A fork from_snapshot mounts the volumes its snapshot recorded and takes none here.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateSandboxBody = Static<typeof CreateSandboxBody>;

export const PatchSandboxBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    metadata: Type.Optional(Metadata),
    auto_pause_seconds: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 604800 }), Type.Null()])),
    auto_pause_keep_memory: Type.Optional(AutoPauseKeepMemory),
    auto_delete_seconds: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 2592000 }), Type.Null()])),
    network: Type.Optional(Type.Union([NetworkRules, Type.Null()])),
    preview_access: Type.Optional(Type.Union([Type.Literal('public'), Type.Literal('private')])),
  },
  { additionalProperties: false, description: 'metadata replaces the whole object; null disables a timer or restores default network rules' },
);
export type PatchSandboxBody = Static<typeof PatchSandboxBody>;

/** The optional body of pause and resume: one flag, `keep_memory`, described for each. */
const keepMemoryBody = (description: string) => Type.Union([Type.Object({ keep_memory: Type.Optional(Type.Boolean({ description })) }, { additionalProperties: false }), Type.Null()]);

export const PauseSandboxBody = keepMemoryBody(
  'false: keep only the disk. Every process ends and the memory is freed; resume boots the sandbox afresh from its disk, environment and template. Never refused for open connections. Default true.',
);
export type PauseSandboxBody = Static<typeof PauseSandboxBody>;

export const ResumeSandboxBody = keepMemoryBody(
  'false: drop the memory the pause kept and boot the sandbox afresh from its disk, environment and template (as after a pause with keep_memory false). Default true: every process continues.',
);
export type ResumeSandboxBody = Static<typeof ResumeSandboxBody>;

export const MigrateSandboxBody = Type.Union([
  Type.Object(
    { node: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The node to move it to; default: the one placement picks in its region' })) },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export type MigrateSandboxBody = Static<typeof MigrateSandboxBody>;

export const SandboxStatus = Type.Union([Type.Literal('active'), Type.Literal('pausing'), Type.Literal('paused'), Type.Literal('resuming'), Type.Literal('migrating'), Type.Literal('failed')]);
export const SANDBOX_STATUSES = SandboxStatus.anyOf.map((s) => s.const);

const sandboxFields = {
  id: Type.String({ description: 'Region-tagged id sb-<region>-<uuid>' }),
  name: Type.Optional(Type.String()),
  template_id: Type.String(),
  status: SandboxStatus,
  driver: Type.String({ description: 'Runtime driver the sandbox runs on' }),
  latest_snapshot_id: Type.Optional(
    Type.String({
      description:
        'After POST /sandboxes/{id}/snapshot: that snapshot. After a pause on a driver that pauses to disk (gvisor): the id of the checkpoint the sandbox resumes from, which is not a Snapshot resource.',
    }),
  ),
  failure_reason: Type.Optional(
    Type.String({
      description:
        'With status failed: why. engine_exited (the engine died under the sandbox), engine_out_of_memory (the host killed the engine for memory), engine_lost (gone after a host restart), node_lost (its node fell silent past the deadline; several hosts), pause_failed (the save of a pause or snapshot took the sandbox down).',
    }),
  ),
  auto_pause_seconds: Type.Optional(Type.Integer()),
  auto_pause_keep_memory: Type.Optional(Type.Boolean({ description: 'Present (false) when an auto-pause keeps only the disk' })),
  kept_memory: Type.Optional(Type.Boolean({ description: 'Present (false) while paused keeping only the disk: resume boots it afresh, its processes do not continue' })),
  auto_delete_seconds: Type.Optional(Type.Integer()),
  auto_delete_at: Type.Optional(DateTime),
  network: Type.Optional(NetworkRules),
  metadata: Metadata,
  preview_access: Type.Union([Type.Literal('legacy_public'), Type.Literal('public'), Type.Literal('private')]),
  secrets: Type.Array(Type.Object({ env: Type.String(), secret: Type.String(), revoked: Type.Boolean() })),
  resources: Resources,
  region: Type.String(),
  node: Type.Optional(Type.String({ description: 'The node holding it (several hosts), shown to keys with sandboxes:move' })),
  created_at: DateTime,
  updated_at: DateTime,
};

export const Sandbox = Type.Object(sandboxFields, { $id: 'Sandbox' });
export type Sandbox = Static<typeof Sandbox>;

export const SandboxWithToken = Type.Object({ ...sandboxFields, access_token: Type.String({ description: 'Send as X-Access-Token to the data plane' }) }, { $id: 'SandboxWithToken' });

export const SandboxList = Type.Object({
  sandboxes: Type.Array(Type.Ref('Sandbox')),
  next_cursor: Type.Optional(Type.String()),
});

export const ListSandboxesQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ description: 'Page size, 1 to 1000 (default 100)' })),
    cursor: Type.Optional(Type.String()),
    status: Type.Optional(Type.String({ description: 'One status or a comma-separated list' })),
  },
  { additionalProperties: true, description: 'metadata.{key}=value filters match exactly, as strings' },
);
