import { type Static, Type } from 'typebox';
import { DateTime } from './common.ts';

export const CreateSshKeyBody = Type.Object(
  {
    public_key: Type.String({ minLength: 1, maxLength: 16384, description: 'One OpenSSH public key line, e.g. the contents of ~/.ssh/id_ed25519.pub' }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Default: the key line's comment" })),
  },
  { additionalProperties: false },
);
export type CreateSshKeyBody = Static<typeof CreateSshKeyBody>;

export const SshKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  algorithm: Type.String({ description: 'e.g. ssh-ed25519' }),
  fingerprint: Type.String({ description: "OpenSSH's SHA256 fingerprint, as `ssh-keygen -l` prints it" }),
  created_at: DateTime,
});

export const SshKeyList = Type.Object({ ssh_keys: Type.Array(SshKey) });

export const SshKeyIdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export type SshKeyIdParam = Static<typeof SshKeyIdParam>;
