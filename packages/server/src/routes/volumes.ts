import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { errors } from '../schemas/common.ts';
import { CreateVolumeBody, ListVolumesQuery, PatchVolumeBody, VolumeIdParam, VolumeList } from '../schemas/volume.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

/** Volumes as a resource; a key's sandbox permissions cover them (they are mounted by sandboxes). */
export async function volumeRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  const read = (req: FastifyRequest) => s.auth.require(principal(req), 'sandboxes:read');
  const write = (req: FastifyRequest) => s.auth.require(principal(req), 'sandboxes:write');
  const tags = ['volumes'];
  const vol = Type.Ref('Volume');

  app.post<{ Body: CreateVolumeBody }>(
    '/volumes',
    {
      onRequest,
      schema: {
        summary: 'Create a volume: a disk of the team that outlives sandboxes',
        description:
          '409: the team has a volume of that name. 429 too_many_volumes: the per-team cap. 503: this host keeps no volumes, or (several hosts) no node can take it. ' +
          "On several hosts the volume lives on one node: sandboxes that mount it run there, and while that node is lost the volume's routes answer 503.",
        tags,
        body: CreateVolumeBody,
        response: { 201: vol, ...errors(400, 401, 403, 409, 429, 503, 507) },
      },
    },
    async (req, reply) => {
      write(req);
      const rec = await s.volumes.create(principal(req), req.body);
      reply.code(201);
      return s.volumes.view(rec);
    },
  );

  app.get<{ Querystring: ListVolumesQuery }>(
    '/volumes',
    { onRequest, schema: { summary: "List the team's volumes, newest first", tags, querystring: ListVolumesQuery, response: { 200: VolumeList, ...errors(400, 401, 403) } } },
    async (req) => {
      read(req);
      const page = await s.volumes.list(principal(req), req.query);
      return { volumes: await Promise.all(page.items.map((v) => s.volumes.view(v))), ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}) };
    },
  );

  app.get<{ Params: VolumeIdParam }>(
    '/volumes/:volume',
    {
      onRequest,
      schema: { summary: 'Get a volume by id or name (503 while its node is lost, several hosts)', tags, params: VolumeIdParam, response: { 200: vol, ...errors(400, 401, 403, 404, 503) } },
    },
    async (req) => {
      read(req);
      return s.volumes.view(await s.volumes.get(principal(req), req.params.volume));
    },
  );

  app.patch<{ Params: VolumeIdParam; Body: PatchVolumeBody }>(
    '/volumes/:volume',
    {
      onRequest,
      schema: { summary: 'Grow a volume (400 on a smaller size)', tags, params: VolumeIdParam, body: PatchVolumeBody, response: { 200: vol, ...errors(400, 401, 403, 404, 503) } },
    },
    async (req) => {
      write(req);
      return s.volumes.view(await s.volumes.patch(principal(req), req.params.volume, req.body));
    },
  );

  app.delete<{ Params: VolumeIdParam }>(
    '/volumes/:volume',
    {
      onRequest,
      schema: {
        summary: 'Delete a volume and its files, for good (409 while a sandbox that is not deleted mounts it)',
        tags,
        params: VolumeIdParam,
        response: { 204: Type.Null(), ...errors(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req, reply) => {
      write(req);
      await s.volumes.delete(principal(req), req.params.volume);
      reply.code(204);
    },
  );
}
