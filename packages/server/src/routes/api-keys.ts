import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { iso } from '../clock.ts';
import { notFound } from '../errors.ts';
import { parseUuid } from '../ids.ts';
import { errors } from '../schemas/common.ts';
import type { KeyFormat } from '../services/auth.ts';
import type { ApiKeyRecord } from '../store/teams.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'First characters of the key, to recognise it' }),
  permissions: Type.Array(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
});

const view = (k: ApiKeyRecord) => ({ id: k.id, name: k.name, prefix: k.keyPrefix, permissions: k.permissions, created_at: iso(k.createdAt) });

export async function apiKeyRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  app.post(
    '/api-keys',
    {
      onRequest,
      schema: {
        summary: "Create an API key with a subset of the caller's permissions (needs keys:manage)",
        tags: ['auth'],
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 64 }),
            permissions: Type.Optional(Type.Array(Type.String(), { maxItems: 64, description: 'Default: every permission of the calling key' })),
            format: Type.Optional(
              Type.Union([Type.Literal('sandpit'), Type.Literal('e2b')], { description: "Key shape: 'sandpit' (sp_..., the default) or 'e2b' (e2b_ and 40 hex digits, for E2B SDKs that check it)" }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Object({ ...ApiKey.properties, key: Type.String({ description: 'Shown once; stored only hashed' }) }), ...errors(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const body = req.body as { name: string; permissions?: string[]; format?: KeyFormat };
      const { record, key } = await s.auth.createKey(principal(req), body.name, body.permissions, body.format);
      reply.code(201).header('cache-control', 'no-store');
      return { ...view(record), key };
    },
  );
  app.get(
    '/api-keys',
    { onRequest, schema: { summary: "List the team's live API keys", tags: ['auth'], response: { 200: Type.Object({ api_keys: Type.Array(ApiKey) }), ...errors(401, 403) } } },
    async (req) => {
      const p = principal(req);
      s.auth.require(p, 'keys:manage');
      return { api_keys: (await s.auth.teams.listKeys(p.teamId)).map(view) };
    },
  );
  app.delete(
    '/api-keys/:key_id',
    {
      onRequest,
      schema: { summary: 'Revoke an API key', tags: ['auth'], params: Type.Object({ key_id: Type.String() }), response: { 204: Type.Null(), ...errors(400, 401, 403, 404) } },
    },
    async (req, reply) => {
      const p = principal(req);
      s.auth.require(p, 'keys:manage');
      const id = parseUuid((req.params as { key_id: string }).key_id, 'API key id');
      if (!(await s.auth.teams.revokeKey(p.teamId, id, s.auth.clock.now()))) throw notFound(`API key '${id}' not found`);
      reply.code(204);
    },
  );
}
