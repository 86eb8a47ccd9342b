import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { errors, SandboxIdParam } from '../schemas/common.ts';
import { CreateSnapshotBody, ListSnapshotsQuery, PatchSnapshotBody, SnapshotIdParam, SnapshotList } from '../schemas/snapshot.ts';
import { snapshotView } from '../services/snapshots/snapshots.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

export async function snapshotRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  const read = (req: FastifyRequest) => s.auth.require(principal(req), 'snapshots:read');
  const write = (req: FastifyRequest) => s.auth.require(principal(req), 'snapshots:write');
  const tags = ['snapshots'];
  const snap = Type.Ref('Snapshot');

  app.post<{ Params: SandboxIdParam; Body: CreateSnapshotBody | undefined }>(
    '/sandboxes/:sandbox_id/snapshot',
    {
      onRequest,
      schema: {
        summary: 'Capture memory and disk of an active or paused sandbox; a running sandbox is paused only during the capture',
        description:
          '201: ready (returns once ready). 200: a retry with the same idempotency_key, whatever became of that snapshot. ' +
          "202 + Retry-After: the capture outlasted the server's deadline and settles in the background; poll GET /snapshots/{id}. " +
          '409: the sandbox is not active or paused, or cannot be captured as it stands (e.g. open TCP connections under gVisor; with Retry-After when the engine knows when a retry works). ' +
          '500: the save took the running sandbox down; it is recorded failed. ' +
          "410: the snapshot made with that key was deleted. 503: the host's driver cannot snapshot (container), or the host could not take it; retry.",
        tags,
        params: SandboxIdParam,
        body: Type.Optional(CreateSnapshotBody),
        response: { 200: snap, 201: snap, 202: snap, ...errors(400, 401, 403, 404, 409, 410, 429, 500, 503, 507) },
      },
    },
    async (req, reply) => {
      write(req);
      const out = await s.snapshots.create(principal(req), req.params.sandbox_id, req.body ?? {});
      reply.code(out.status);
      if (out.retryAfterS !== undefined) reply.header('retry-after', String(out.retryAfterS));
      return snapshotView(out.snapshot);
    },
  );

  app.get<{ Querystring: ListSnapshotsQuery }>(
    '/snapshots',
    {
      onRequest,
      schema: { summary: "List the team's snapshots, newest first; filter with sandbox_id", tags, querystring: ListSnapshotsQuery, response: { 200: SnapshotList, ...errors(400, 401, 403) } },
    },
    async (req) => {
      read(req);
      const page = await s.snapshots.list(principal(req), req.query);
      return { snapshots: page.items.map(snapshotView), ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}) };
    },
  );

  app.get<{ Params: SnapshotIdParam }>(
    '/snapshots/:snapshot_id',
    { onRequest, schema: { summary: 'Get a snapshot', tags, params: SnapshotIdParam, response: { 200: snap, ...errors(400, 401, 403, 404) } } },
    async (req) => {
      read(req);
      return snapshotView(await s.snapshots.get(principal(req), req.params.snapshot_id));
    },
  );

  app.patch<{ Params: SnapshotIdParam; Body: PatchSnapshotBody }>(
    '/snapshots/:snapshot_id',
    { onRequest, schema: { summary: 'Rename a snapshot', tags, params: SnapshotIdParam, body: PatchSnapshotBody, response: { 200: snap, ...errors(400, 401, 403, 404) } } },
    async (req) => {
      write(req);
      return snapshotView(await s.snapshots.patch(principal(req), req.params.snapshot_id, req.body));
    },
  );

  app.delete<{ Params: SnapshotIdParam }>(
    '/snapshots/:snapshot_id',
    {
      onRequest,
      schema: { summary: 'Delete a snapshot and its files (409 while it is being created)', tags, params: SnapshotIdParam, response: { 204: Type.Null(), ...errors(400, 401, 403, 404, 409) } },
    },
    async (req, reply) => {
      write(req);
      await s.snapshots.delete(principal(req), req.params.snapshot_id);
      reply.code(204);
    },
  );
}
