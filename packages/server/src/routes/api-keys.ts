import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { iso } from '../clock.ts';
import { notFound } from '../errors.ts';
import { parseUuid } from '../ids.ts';
import { ApiKey, ApiKeyIdParam, CreateApiKeyBody } from '../schemas/api-key.ts';
import { errors } from '../schemas/common.ts';
import type { ApiKeyRecord } from '../store/teams.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

const view = (k: ApiKeyRecord) => ({ id: k.id, name: k.name, prefix: k.keyPrefix, permissions: k.permissions, created_at: iso(k.createdAt) });

export async function apiKeyRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  app.post<{ Body: CreateApiKeyBody }>(
    '/api-keys',
    {
      onRequest,
      schema: {
        summary: "Create an API key with a subset of the caller's permissions (needs keys:manage)",
        tags: ['auth'],
        body: CreateApiKeyBody,
        response: { 201: Type.Object({ ...ApiKey.properties, key: Type.String({ description: 'Shown once; stored only hashed' }) }), ...errors(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const body = req.body;
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
  app.delete<{ Params: ApiKeyIdParam }>(
    '/api-keys/:key_id',
    {
      onRequest,
      schema: { summary: 'Revoke an API key', tags: ['auth'], params: ApiKeyIdParam, response: { 204: Type.Null(), ...errors(400, 401, 403, 404) } },
    },
    async (req, reply) => {
      const p = principal(req);
      s.auth.require(p, 'keys:manage');
      const id = parseUuid(req.params.key_id, 'API key id');
      if (!(await s.auth.revokeKey(p.teamId, id))) throw notFound(`API key '${id}' not found`);
      reply.code(204);
    },
  );
}
