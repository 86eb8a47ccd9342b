import { type Static, Type } from 'typebox';
import { DateTime } from './common.ts';

export const ExecBody = Type.Object(
  {
    command: Type.String({ minLength: 1, maxLength: 262144, description: 'Run by /bin/sh -c unless args is given' }),
    args: Type.Optional(Type.Array(Type.String({ maxLength: 131072 }), { maxItems: 4096 })),
    env: Type.Optional(Type.Record(Type.String(), Type.String(), { maxProperties: 256 })),
    working_dir: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'Default /home/user' })),
    timeout_s: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 86400,
        description: 'Default 30. At the limit the whole process group is killed and exit_code is 124',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ExecBody = Static<typeof ExecBody>;

export const ControlExecResult = Type.Object({
  stdout: Type.String(),
  stderr: Type.String(),
  exit_code: Type.Integer(),
});

export const DataExecResult = Type.Object({
  stdout: Type.String(),
  stderr: Type.String(),
  exit_code: Type.Integer(),
  truncated: Type.Optional(Type.Boolean({ description: 'Present and true when combined output exceeded 8 MiB' })),
});
/** The data plane's form; the control plane answers the same without `truncated`. */
export type ExecResult = Static<typeof DataExecResult>;

export const ExecStreamEvent = Type.Object(
  {
    timestamp: DateTime,
    stdout: Type.Optional(Type.String()),
    stderr: Type.Optional(Type.String()),
    exit_code: Type.Optional(Type.Integer()),
    finished: Type.Optional(Type.Boolean()),
    error: Type.Optional(Type.String()),
  },
  { description: 'One `data:` line of the text/event-stream response' },
);
export type StreamEvent = Static<typeof ExecStreamEvent>;
