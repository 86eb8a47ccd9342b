import { type Static, Type } from 'typebox';

const Kind = Type.Union([Type.Literal('added'), Type.Literal('modified'), Type.Literal('deleted')]);
const EntryType = Type.Union([Type.Literal('file'), Type.Literal('dir'), Type.Literal('symlink'), Type.Literal('other')]);
const AbsPath = Type.String({ minLength: 1, maxLength: 4096, pattern: '^/', description: 'Absolute path inside the sandbox' });

export const Change = Type.Object(
  {
    path: Type.String(),
    kind: Kind,
    type: EntryType,
    size: Type.Integer({ format: 'int64', description: 'Bytes of a file now (before, for a deletion); 0 for other types' }),
  },
  { $id: 'Change', description: "A path whose content differs in the sandbox's writable layer from its base" },
);
export type Change = Static<typeof Change>;

export const ChangeBase = Type.Object({
  kind: Type.Union([Type.Literal('template'), Type.Literal('snapshot')]),
  id: Type.String({ description: 'The template id, or the snapshot the sandbox was forked from' }),
});

export const ChangesQuery = Type.Object(
  {
    path: Type.Optional(Type.String({ description: 'Only this path and what is beneath it (absolute)' })),
    diff: Type.Optional(Type.String({ description: 'Instead of the list: a unified diff of this one text file against the base (text/plain)' })),
    limit: Type.Optional(Type.String({ description: 'Page size, 1 to 1000 (default 100)' })),
    cursor: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type ChangesQuery = Static<typeof ChangesQuery>;

export const ChangeList = Type.Object({ base: ChangeBase, changes: Type.Array(Type.Ref('Change')), next_cursor: Type.Optional(Type.String()) });

export const ApplyChangesBody = Type.Object(
  {
    from: Type.String({ minLength: 1, maxLength: 64, description: 'The sandbox whose changes are copied (same base as this one)' }),
    paths: Type.Optional(Type.Array(AbsPath, { maxItems: 1000, description: 'Only these paths and what is beneath them; default all' })),
  },
  { additionalProperties: false },
);
export type ApplyChangesBody = Static<typeof ApplyChangesBody>;

const Applied = Type.Object({ path: Type.String(), kind: Kind });
const Conflict = Type.Object({
  path: Type.String(),
  kind: Kind,
  here: Type.Object({ path: Type.String(), kind: Kind }, { description: 'The change this sandbox made since the common base that collides' }),
});
const Skipped = Type.Object({ path: Type.String(), reason: Type.String() });

export const ApplyResult = Type.Object({
  applied: Type.Array(Applied),
  conflicts: Type.Array(Conflict, { description: 'Not applied: this sandbox changed the same path (or one above or below it) differently since the common base' }),
  skipped: Type.Array(Skipped, { description: 'Not applied: symlinks and special files, which the data plane does not write' }),
});
export type ApplyResult = Static<typeof ApplyResult>;
