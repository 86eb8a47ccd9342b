import type { FastifyInstance } from 'fastify';
import { ApplyChangesBody, ApplyResult, ChangeList, ChangesQuery } from '../schemas/changes.ts';
import { errors, SandboxIdParam } from '../schemas/common.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

const tags = ['sandboxes'];

/** What a sandbox changed against its base, and copying those changes into another sandbox of the same base. */
export async function sandboxChangeRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);

  app.get<{ Params: SandboxIdParam; Querystring: ChangesQuery }>(
    '/sandboxes/:sandbox_id/changes',
    {
      onRequest,
      schema: {
        summary: "Files added, modified and deleted in the sandbox's writable layer against its template or the snapshot it was forked from, by path",
        description:
          'With `diff=<path>`: a unified diff (text/plain) of that one changed text file instead; 400 for a binary file, a directory or one over 4 MiB, 404 when the path is not changed. ' +
          "409: the sandbox's layer is not on this host (failed). 503: the engine does not show layers.",
        tags,
        params: SandboxIdParam,
        querystring: ChangesQuery,
        response: { 200: { content: { 'application/json': { schema: ChangeList }, 'text/plain': { schema: { type: 'string' } } } }, ...errors(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req, reply) => {
      const p = principal(req);
      s.auth.require(p, 'sandboxes:read');
      const rec = await s.sandboxes.get(p, req.params.sandbox_id);
      if (req.query.diff !== undefined) return reply.type('text/plain; charset=utf-8').send(await s.changes.diff(rec, req.query.diff));
      const page = await s.changes.list(rec, req.query);
      return { base: page.base, changes: page.items, ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}) };
    },
  );

  app.post<{ Params: SandboxIdParam; Body: ApplyChangesBody }>(
    '/sandboxes/:sandbox_id/changes/apply',
    {
      onRequest,
      schema: {
        summary: "Copy another sandbox's changes into this one, each file whole",
        description:
          'Both sandboxes must have the same base (template and version, or snapshot): 409 conflict otherwise. Paths this sandbox changed too since the base are reported in `conflicts` and left alone. ' +
          "A paused sandbox is resumed. 404: either sandbox is not in the team. 507: this sandbox's disk filled (files applied before stay).",
        tags,
        params: SandboxIdParam,
        body: ApplyChangesBody,
        response: { 200: ApplyResult, ...errors(400, 401, 403, 404, 409, 503, 507) },
      },
    },
    async (req) => {
      const p = principal(req);
      s.auth.require(p, 'sandboxes:write');
      const [target, source] = await Promise.all([s.sandboxes.get(p, req.params.sandbox_id), s.sandboxes.get(p, req.body.from)]);
      return s.changes.apply(target, source, req.body.paths);
    },
  );
}
