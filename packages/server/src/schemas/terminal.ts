import { type Static, Type } from 'typebox';
import { DateTime } from './common.ts';

const Size = (what: string, dflt: number) => Type.Integer({ minimum: 1, maximum: 1000, description: `${what}, default ${dflt}` });

export const TerminalBody = Type.Object(
  {
    cols: Type.Optional(Size('Columns', 80)),
    rows: Type.Optional(Size('Rows', 24)),
    command: Type.Optional(Type.String({ minLength: 1, maxLength: 262144, description: 'Default: the login shell `bash -l`. Run by /bin/sh -c unless args is given' })),
    args: Type.Optional(Type.Array(Type.String({ maxLength: 131072 }), { maxItems: 4096 })),
    env: Type.Optional(Type.Record(Type.String(), Type.String(), { maxProperties: 256, description: 'TERM defaults to xterm-256color' })),
    working_dir: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'Default /home/user' })),
  },
  { additionalProperties: false },
);
export type TerminalBody = Static<typeof TerminalBody>;

export const TerminalIdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export type TerminalIdParam = Static<typeof TerminalIdParam>;

export const TerminalInfo = Type.Object(
  {
    id: Type.String(),
    pid: Type.Integer(),
    command: Type.String(),
    args: Type.Array(Type.String()),
    cols: Type.Integer(),
    rows: Type.Integer(),
    created_at: DateTime,
    running: Type.Boolean(),
    exit_code: Type.Optional(Type.Integer()),
  },
  { $id: 'TerminalInfo' },
);
export type TerminalInfo = Static<typeof TerminalInfo>;

export const TerminalList = Type.Object({ terminals: Type.Array(Type.Ref('TerminalInfo')) });

/** Control messages a client sends as JSON text frames. */
export const TerminalControl = Type.Union([
  Type.Object({ type: Type.Literal('resize'), cols: Type.Integer({ minimum: 1, maximum: 1000 }), rows: Type.Integer({ minimum: 1, maximum: 1000 }) }),
  Type.Object({ type: Type.Literal('input'), data: Type.String() }),
]);
export type TerminalControl = Static<typeof TerminalControl>;
