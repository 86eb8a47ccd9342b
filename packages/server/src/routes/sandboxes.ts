import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { badRequest } from '../errors.ts';
import { errors, SandboxIdParam } from '../schemas/common.ts';
import { CreateSandboxBody, ListSandboxesQuery, MigrateSandboxBody, PatchSandboxBody, PauseSandboxBody, ResumeSandboxBody, SandboxList } from '../schemas/sandbox.ts';
import { sandboxView, withToken } from '../services/sandboxes/sandbox-view.ts';
import type { SandboxRecord } from '../store/sandboxes.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

const NONE_REVOKED: ReadonlySet<string> = new Set();

export async function sandboxRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  const read = (req: FastifyRequest) => s.auth.require(principal(req), 'sandboxes:read');
  const write = (req: FastifyRequest) => s.auth.require(principal(req), 'sandboxes:write');
  const tags = ['sandboxes'];
  const views = async (req: FastifyRequest, recs: SandboxRecord[]) => {
    const revoked = await s.secrets.revokedNames(recs.filter((r) => Object.keys(r.secrets).length > 0).map((r) => r.id));
    const showNode = principal(req).permissions.includes('sandboxes:move');
    return recs.map((r) => sandboxView(r, revoked.get(r.id) ?? NONE_REVOKED, showNode));
  };
  const view = async (req: FastifyRequest, rec: SandboxRecord) => (await views(req, [rec]))[0]!;

  app.post<{ Body: CreateSandboxBody }>(
    '/sandboxes',
    {
      onRequest,
      schema: {
        summary: 'Create a sandbox; it is ready to use when this returns',
        tags,
        body: CreateSandboxBody,
        response: { 201: Type.Ref('SandboxWithToken'), ...errors(400, 401, 403, 404, 429, 507) },
      },
    },
    async (req, reply) => {
      write(req);
      const rec = await s.sandboxes.create(principal(req), req.body);
      reply.code(201).header('cache-control', 'no-store');
      return withToken(rec, await view(req, rec));
    },
  );

  // The raw query: metadata.{key} filters and repeated parameters are checked here, beyond ListSandboxesQuery's own fields.
  app.get<{ Querystring: Record<string, string | string[]> }>(
    '/sandboxes',
    {
      onRequest,
      schema: {
        summary: "List the team's sandboxes, newest first; filter with status and metadata.{key}=value",
        tags,
        querystring: ListSandboxesQuery,
        response: { 200: SandboxList, ...errors(400, 401, 403) },
      },
    },
    async (req) => {
      read(req);
      const query = req.query;
      const metadata: [string, string][] = [];
      for (const [k, v] of Object.entries(query)) {
        if (!k.startsWith('metadata.')) continue;
        if (Array.isArray(v)) throw badRequest(`query parameter '${k}' is given more than once`);
        metadata.push([k.slice('metadata.'.length), v]);
      }
      const single = (name: string) => {
        const v = query[name];
        if (Array.isArray(v)) throw badRequest(`query parameter '${name}' is given more than once`);
        return v;
      };
      const page = await s.sandboxes.list(principal(req), { limit: single('limit'), cursor: single('cursor'), status: single('status'), metadata });
      return { sandboxes: await views(req, page.items), ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}) };
    },
  );

  app.get<{ Params: SandboxIdParam }>(
    '/sandboxes/:sandbox_id',
    { onRequest, schema: { summary: 'Get a sandbox', tags, params: SandboxIdParam, response: { 200: Type.Ref('Sandbox'), ...errors(400, 401, 403, 404) } } },
    async (req) => {
      read(req);
      return view(req, await s.sandboxes.get(principal(req), req.params.sandbox_id));
    },
  );

  app.patch<{ Params: SandboxIdParam; Body: PatchSandboxBody }>(
    '/sandboxes/:sandbox_id',
    {
      onRequest,
      schema: {
        summary: 'Update name, metadata, timers, network rules or preview access',
        tags,
        params: SandboxIdParam,
        body: PatchSandboxBody,
        response: { 200: Type.Ref('Sandbox'), ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      write(req);
      return view(req, await s.sandboxes.patch(principal(req), req.params.sandbox_id, req.body));
    },
  );

  app.post<{ Params: SandboxIdParam; Body: PauseSandboxBody }>(
    '/sandboxes/:sandbox_id/pause',
    {
      onRequest,
      schema: {
        summary: 'Pause a sandbox (409 when already paused)',
        description:
          'The body is optional. By default memory and disk are kept and resume continues every process. ' +
          '409 also when the engine cannot capture the sandbox as it stands (gVisor: TCP connections on its network, with Retry-After when a retry is known to work then); ' +
          'a pause with keep_memory false is never refused so. ' +
          '500: the save took the sandbox down; it is recorded failed. 503: keep_memory false on an engine that cannot boot a sandbox again from its disk.',
        tags,
        params: SandboxIdParam,
        body: PauseSandboxBody,
        response: { 200: Type.Ref('Sandbox'), ...errors(400, 401, 403, 404, 409, 500, 503, 507) },
      },
    },
    async (req) => {
      write(req);
      return view(req, await s.sandboxes.pause(principal(req), req.params.sandbox_id, { keepMemory: req.body?.keep_memory }));
    },
  );

  for (const [verb, summary] of [
    ['resume', 'Resume a paused sandbox (409 when active); returns the access token'],
    ['activate', 'Resume when paused, no-op when active; returns the access token'],
  ] as const) {
    app.post<{ Params: SandboxIdParam; Body: ResumeSandboxBody }>(
      `/sandboxes/:sandbox_id/${verb}`,
      {
        onRequest,
        schema: { summary, tags, params: SandboxIdParam, body: ResumeSandboxBody, response: { 200: Type.Ref('SandboxWithToken'), ...errors(400, 401, 403, 404, 409, 429, 503) } },
      },
      async (req, reply) => {
        write(req);
        const rec = await s.sandboxes[verb](principal(req), req.params.sandbox_id, { keepMemory: req.body?.keep_memory });
        reply.header('cache-control', 'no-store');
        return withToken(rec, await view(req, rec));
      },
    );
  }

  app.post<{ Params: SandboxIdParam; Body: MigrateSandboxBody }>(
    '/sandboxes/:sandbox_id/migrate',
    {
      onRequest,
      schema: {
        summary: 'Move a sandbox to another node (several hosts; needs sandboxes:move)',
        description:
          'A running gVisor sandbox moves with every process and its memory: it is migrating while it moves (its connections are cut as by a pause) and active on the new node when this returns, ' +
          'with the same id, access token, files, network rules, secrets and preview ports. A paused one moves paused (one paused keeping only its disk moves its disk, and boots there on resume). ' +
          '409: it cannot move (an engine whose memory is not on disk, volumes it mounts, a transition under way, a single-host installation); nothing changed. ' +
          '503: the target is lost, full or takes no sandboxes (nothing changed), or the copy failed (it runs on where it was).',
        tags,
        params: SandboxIdParam,
        body: MigrateSandboxBody,
        response: { 200: Type.Ref('Sandbox'), ...errors(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req) => {
      s.auth.require(principal(req), 'sandboxes:move');
      return view(req, await s.migrations.migrate(principal(req), req.params.sandbox_id, req.body?.node));
    },
  );

  app.delete<{ Params: SandboxIdParam }>(
    '/sandboxes/:sandbox_id',
    { onRequest, schema: { summary: 'Delete a sandbox and release everything it held', tags, params: SandboxIdParam, response: { 204: Type.Null(), ...errors(400, 401, 403, 404) } } },
    async (req, reply) => {
      write(req);
      await s.sandboxes.delete(principal(req), req.params.sandbox_id);
      reply.code(204);
    },
  );
}
