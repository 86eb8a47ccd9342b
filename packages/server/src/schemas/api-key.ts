import { type Static, Type } from 'typebox';

export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'First characters of the key, to recognise it' }),
  permissions: Type.Array(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
});

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    permissions: Type.Optional(Type.Array(Type.String(), { maxItems: 64, description: 'Default: every permission of the calling key' })),
    format: Type.Optional(
      Type.Union([Type.Literal('sandpit'), Type.Literal('e2b')], { description: "Key shape: 'sandpit' (sp_..., the default) or 'e2b' (e2b_ and 40 hex digits, for E2B SDKs that check it)" }),
    ),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const ApiKeyIdParam = Type.Object({ key_id: Type.String() });
export type ApiKeyIdParam = Static<typeof ApiKeyIdParam>;
