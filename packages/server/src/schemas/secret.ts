import { type Static, Type } from 'typebox';
import { DateTime } from './common.ts';

export const CreateSecretBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' }),
    value: Type.String({ minLength: 1, maxLength: 65536, description: 'Stored encrypted; never returned' }),
    allowed_hosts: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
        maxItems: 64,
        description: 'Hosts the value may be sent to (*.<domain> allowed); absent: any host the sandbox may reach',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateSecretBody = Static<typeof CreateSecretBody>;

export const Secret = Type.Object({
  name: Type.String(),
  allowed_hosts: Type.Array(Type.String()),
  created_at: DateTime,
});

export const SecretList = Type.Object({ secrets: Type.Array(Secret) });

export const SecretNameParam = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) });
export type SecretNameParam = Static<typeof SecretNameParam>;
