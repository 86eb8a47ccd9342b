import { type Static, Type } from 'typebox';
import { DateTime } from './common.ts';

const Name = Type.String({ minLength: 1, maxLength: 63, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'Unique in the team; letters, digits, `.`, `_`, `-`' });
const SizeMib = Type.Integer({ minimum: 1, maximum: 16 * 1024 * 1024, description: 'Quota in MiB: writes past it fail inside (EDQUOT) and uploads answer 507' });

export const Volume = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    size_mib: Type.Integer(),
    used_bytes: Type.Integer({ format: 'int64', description: 'Bytes its files hold (accounted by the file system; may lag writes by seconds)' }),
    mounted_by: Type.Array(Type.String({ format: 'uuid' }), { description: 'Sandboxes that mount it now (not deleted)' }),
    created_at: DateTime,
  },
  { $id: 'Volume', description: "A team's disk that outlives sandboxes; mount it with POST /sandboxes {volumes: [{volume, path}]}" },
);
export type Volume = Static<typeof Volume>;

export const CreateVolumeBody = Type.Object({ name: Name, size_mib: SizeMib }, { additionalProperties: false });
export type CreateVolumeBody = Static<typeof CreateVolumeBody>;

export const PatchVolumeBody = Type.Object({ size_mib: Type.Integer({ minimum: 1, maximum: 16 * 1024 * 1024, description: 'New quota; only growing is allowed' }) }, { additionalProperties: false });
export type PatchVolumeBody = Static<typeof PatchVolumeBody>;

export const VolumeIdParam = Type.Object({ volume: Type.String({ description: 'Volume UUID or name' }) });
export type VolumeIdParam = Static<typeof VolumeIdParam>;

export const ListVolumesQuery = Type.Object(
  { limit: Type.Optional(Type.String({ description: 'Page size, 1 to 1000 (default 100)' })), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
export type ListVolumesQuery = Static<typeof ListVolumesQuery>;

export const VolumeList = Type.Object({ volumes: Type.Array(Type.Ref('Volume')), next_cursor: Type.Optional(Type.String()) });

/** One mount of POST /sandboxes {volumes}. */
export const VolumeMount = Type.Object(
  {
    volume: Type.String({ minLength: 1, maxLength: 64, description: 'Volume UUID or name' }),
    path: Type.String({ minLength: 2, maxLength: 1024, pattern: '^/', description: 'Absolute path inside the sandbox, normalized (no `..`, `.` or `//`)' }),
    read_only: Type.Optional(Type.Boolean({ description: 'Writes inside fail with EROFS' })),
  },
  { additionalProperties: false },
);
export type VolumeMount = Static<typeof VolumeMount>;

export const VolumeFilePathQuery = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 4096, description: 'Path inside the volume, from its root (`/a/b` or `a/b`); no `..`; symlinks leading out of the volume are refused' }) },
  { additionalProperties: false },
);
export type VolumeFilePathQuery = Static<typeof VolumeFilePathQuery>;

export const VolumeFileEntry = Type.Object(
  {
    name: Type.String(),
    path: Type.String({ description: "From the volume's root" }),
    type: Type.Union([Type.Literal('file'), Type.Literal('dir'), Type.Literal('symlink'), Type.Literal('other')]),
    size: Type.Integer({ minimum: 0 }),
    modified_at: DateTime,
  },
  { $id: 'VolumeFileEntry' },
);

export const VolumeFileList = Type.Object({ entries: Type.Array(Type.Ref('VolumeFileEntry'), { description: 'Sorted by name' }) });
