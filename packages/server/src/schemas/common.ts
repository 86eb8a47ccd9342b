import { type Static, Type } from 'typebox';
import { ERROR_CODE_LIST, type ErrorCode } from '../error-codes.ts';

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.Unsafe<ErrorCode>({ type: 'string', enum: ERROR_CODE_LIST, description: 'Stable, machine-readable code' }),
      message: Type.String({ description: 'Human-readable; may change between releases' }),
    }),
  },
  { $id: 'Error', description: 'Every error answers with this envelope' },
);

/** Error responses to declare on a route, each with the envelope. */
export function errors(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [s, Type.Ref('Error')]));
}

export const Resources = Type.Object({
  vcpu_count: Type.Integer(),
  memory_mib: Type.Integer(),
  disk_mib: Type.Integer(),
});

export const DateTime = Type.String({ format: 'date-time' });

export const SandboxIdParam = Type.Object({
  sandbox_id: Type.String({ description: 'PublicSandboxId: a UUID or sb-<region>-<uuid>' }),
});
export type SandboxIdParam = Static<typeof SandboxIdParam>;

export const Empty = Type.Null({ description: 'No content' });
