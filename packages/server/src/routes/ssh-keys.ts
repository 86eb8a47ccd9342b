import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { iso } from '../clock.ts';
import { errors } from '../schemas/common.ts';
import { CreateSshKeyBody, SshKey, SshKeyIdParam, SshKeyList } from '../schemas/ssh-key.ts';
import type { SshKeyRecord } from '../store/ssh-keys.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

const view = (k: SshKeyRecord) => ({ id: k.id, name: k.name, algorithm: k.algorithm, fingerprint: k.fingerprint, created_at: iso(k.createdAt) });

/** The team's SSH public keys: each logs in to every sandbox of the team through the SSH gateway (`ssh <sandbox-id>@host -p <ssh_port>`). */
export async function sshKeyRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  const tags = ['ssh'];
  app.post<{ Body: CreateSshKeyBody }>(
    '/ssh-keys',
    {
      onRequest,
      schema: {
        summary: "Register an SSH public key for the team: it logs in to any of the team's sandboxes (user name: the sandbox id)",
        tags,
        body: CreateSshKeyBody,
        response: { 201: SshKey, ...errors(400, 401, 403, 409) },
      },
    },
    async (req, reply) => {
      const p = principal(req);
      s.auth.require(p, 'sandboxes:write');
      reply.code(201);
      return view(await s.sshKeys.add(p, req.body));
    },
  );
  app.get('/ssh-keys', { onRequest, schema: { summary: "The team's SSH public keys", tags, response: { 200: SshKeyList, ...errors(401, 403) } } }, async (req) => {
    const p = principal(req);
    s.auth.require(p, 'sandboxes:read');
    return { ssh_keys: (await s.sshKeys.list(p)).map(view) };
  });
  app.delete<{ Params: SshKeyIdParam }>(
    '/ssh-keys/:id',
    {
      onRequest,
      schema: { summary: 'Remove an SSH public key: it logs in nowhere from now on', tags, params: SshKeyIdParam, response: { 204: Type.Null(), ...errors(401, 403, 404) } },
    },
    async (req, reply) => {
      const p = principal(req);
      s.auth.require(p, 'sandboxes:write');
      await s.sshKeys.remove(p, req.params.id);
      reply.code(204);
    },
  );
}
