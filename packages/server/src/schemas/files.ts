import { type Static, Type } from 'typebox';
import { DateTime } from './common.ts';

const PATH_DOC = 'Path inside the sandbox; relative paths are relative to /home/user. Resolved as `user` (permissions and symlinks as that user sees them).';
export const FilePath = Type.String({ minLength: 1, maxLength: 4096, description: PATH_DOC });

export const PathQuery = Type.Object({ path: FilePath }, { additionalProperties: false });
export type PathQuery = Static<typeof PathQuery>;

export const WatchQuery = Type.Object(
  {
    path: FilePath,
    recursive: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'Also watch subdirectories (default false)' })),
  },
  { additionalProperties: false },
);
export type WatchQuery = Static<typeof WatchQuery>;

export const FileEntry = Type.Object(
  {
    name: Type.String(),
    path: Type.String({ description: 'Absolute path' }),
    type: Type.Union([Type.Literal('file'), Type.Literal('dir'), Type.Literal('symlink'), Type.Literal('other')], { description: 'A symlink is reported as itself, not followed' }),
    size: Type.Integer({ minimum: 0 }),
    mode: Type.Integer({ description: 'Permission bits, e.g. 420 = 0644' }),
    permissions: Type.String({ description: 'e.g. rw-r--r--' }),
    modified_at: DateTime,
    symlink_target: Type.Optional(Type.String()),
  },
  { $id: 'FileEntry' },
);
export type FileEntry = Static<typeof FileEntry>;

export const FileList = Type.Object({ entries: Type.Array(Type.Ref('FileEntry'), { description: 'Sorted by name; . and .. omitted' }) });

export const MkdirBody = Type.Object(
  {
    path: FilePath,
    parents: Type.Optional(Type.Boolean({ description: 'Create missing parents and accept an existing directory (mkdir -p). Default true' })),
  },
  { additionalProperties: false },
);
export type MkdirBody = Static<typeof MkdirBody>;

export const RemoveBody = Type.Object(
  {
    path: FilePath,
    recursive: Type.Optional(Type.Boolean({ description: 'Remove a directory with everything in it. Default false: a non-empty directory is 409' })),
  },
  { additionalProperties: false },
);
export type RemoveBody = Static<typeof RemoveBody>;

export const RenameBody = Type.Object(
  {
    from: FilePath,
    to: FilePath,
    overwrite: Type.Optional(Type.Boolean({ description: 'Replace an existing target (default true); false: an existing target is 409' })),
  },
  { additionalProperties: false },
);
export type RenameBody = Static<typeof RenameBody>;

export const WatchEvent = Type.Object(
  {
    timestamp: DateTime,
    type: Type.Optional(
      Type.Union([Type.Literal('create'), Type.Literal('write'), Type.Literal('remove'), Type.Literal('rename_from'), Type.Literal('rename_to'), Type.Literal('chmod')], {
        description: 'rename_from/rename_to are the two halves of a rename (to or from outside the watched tree only one is seen)',
      }),
    ),
    path: Type.Optional(Type.String({ description: 'Absolute path of what changed' })),
    is_dir: Type.Optional(Type.Boolean()),
    finished: Type.Optional(Type.Boolean({ description: 'Final event: the watched directory was removed or moved' })),
    error: Type.Optional(Type.String()),
  },
  { description: 'One `data:` line of the text/event-stream response' },
);
export type WatchEvent = Static<typeof WatchEvent>;
