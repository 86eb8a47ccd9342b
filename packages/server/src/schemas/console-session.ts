import { type Static, Type } from 'typebox';
import { DateTime } from './common.ts';

export const SignInBody = Type.Object({ api_key: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false });
export type SignInBody = Static<typeof SignInBody>;

export const ConsoleSession = Type.Object({
  team_id: Type.String(),
  user_id: Type.String(),
  key_id: Type.String(),
  permissions: Type.Array(Type.String()),
  expires_at: DateTime,
});
