import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { iso } from '../clock.ts';
import { errors } from '../schemas/common.ts';
import { CreateSecretBody, Secret, SecretList, SecretNameParam } from '../schemas/secret.ts';
import type { SecretRecord } from '../store/secrets.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

const view = (s: SecretRecord) => ({ name: s.name, allowed_hosts: s.allowedHosts, created_at: iso(s.createdAt) });

export async function secretRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  const tags = ['secrets'];
  app.post<{ Body: CreateSecretBody }>(
    '/secrets',
    {
      onRequest,
      schema: {
        summary: 'Store a secret; sandboxes bound to it see only a proxy token, swapped for the value at egress',
        tags,
        body: CreateSecretBody,
        response: { 201: Secret, ...errors(400, 401, 403, 409) },
      },
    },
    async (req, reply) => {
      const p = principal(req);
      s.auth.require(p, 'secrets:write');
      const rec = await s.secrets.create(p, req.body);
      reply.code(201).header('cache-control', 'no-store');
      return view(rec);
    },
  );
  app.get('/secrets', { onRequest, schema: { summary: 'List live secrets: names and metadata, never values', tags, response: { 200: SecretList, ...errors(401, 403) } } }, async (req, reply) => {
    const p = principal(req);
    s.auth.require(p, 'secrets:read');
    reply.header('cache-control', 'no-store');
    return { secrets: (await s.secrets.list(p)).map(view) };
  });
  app.delete<{ Params: SecretNameParam }>(
    '/secrets/:name',
    {
      onRequest,
      schema: {
        summary: 'Revoke a secret: bound sandboxes keep a useless token, the proxy refuses it, the name can be reused',
        tags,
        params: SecretNameParam,
        response: { 204: Type.Null(), ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const p = principal(req);
      s.auth.require(p, 'secrets:write');
      await s.secrets.revoke(p, req.params.name);
      reply.code(204).header('cache-control', 'no-store');
    },
  );
}
