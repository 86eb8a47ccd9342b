import { type Static, Type } from 'typebox';
import { DateTime } from './common.ts';
import { ExecBody } from './exec.ts';

export const ProcessBody = Type.Omit(ExecBody, ['timeout_s'], { additionalProperties: false });
export type ProcessBody = Static<typeof ProcessBody>;

export const ProcessIdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'Process id (or its pid)' }) });
export type ProcessIdParam = Static<typeof ProcessIdParam>;

export const ProcessInfo = Type.Object(
  {
    id: Type.String(),
    pid: Type.Integer({ description: 'Process id inside the sandbox' }),
    command: Type.String(),
    args: Type.Array(Type.String()),
    working_dir: Type.String(),
    started_at: DateTime,
    running: Type.Boolean(),
    exit_code: Type.Optional(Type.Integer({ description: 'Present once exited; 128+n when killed by signal n' })),
    signal: Type.Optional(Type.Integer()),
  },
  { $id: 'ProcessInfo' },
);
export type ProcessInfo = Static<typeof ProcessInfo>;

export const ProcessList = Type.Object({ processes: Type.Array(Type.Ref('ProcessInfo')) });

export const ProcessOutput = Type.Object({
  id: Type.String(),
  pid: Type.Integer(),
  command: Type.String(),
  args: Type.Array(Type.String()),
  working_dir: Type.String(),
  started_at: DateTime,
  running: Type.Boolean(),
  exit_code: Type.Optional(Type.Integer()),
  signal: Type.Optional(Type.Integer()),
  stdout: Type.String(),
  stderr: Type.String(),
  dropped_bytes: Type.Integer({ description: 'Older output dropped: only the last 1 MiB (stdout and stderr together) is kept' }),
});

export const StdinBody = Type.Object(
  {
    data: Type.String({ maxLength: 4 * 1024 * 1024, description: 'Input for the process' }),
    encoding: Type.Optional(Type.Union([Type.Literal('utf8'), Type.Literal('base64')], { description: 'Default utf8' })),
    eof: Type.Optional(Type.Boolean({ description: 'Close stdin after this input' })),
  },
  { additionalProperties: false },
);
export type StdinBody = Static<typeof StdinBody>;

export const SignalBody = Type.Object(
  { signal: Type.Union([Type.String({ minLength: 1, maxLength: 16, description: 'e.g. SIGTERM or TERM' }), Type.Integer({ minimum: 1, maximum: 64 })]) },
  { additionalProperties: false },
);
export type SignalBody = Static<typeof SignalBody>;
