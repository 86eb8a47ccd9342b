import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errors, SandboxIdParam } from '../schemas/common.ts';
import { PreviewPort, PreviewPortList, PreviewPortParams, PublishPreviewPortBody } from '../schemas/preview-port.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

export async function previewPortRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  const tags = ['previews'];
  app.post<{ Params: SandboxIdParam; Body: PublishPreviewPortBody }>(
    '/sandboxes/:sandbox_id/preview-ports',
    {
      onRequest,
      schema: {
        summary: 'Publish a port of the sandbox at its preview URL (re-publishing changes its access)',
        tags,
        params: SandboxIdParam,
        body: PublishPreviewPortBody,
        response: { 201: PreviewPort, ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const p = principal(req);
      s.auth.require(p, 'sandboxes:write');
      const out = await s.previews.publish(p, req.params.sandbox_id, req.body, s.auth.clock.now());
      reply.code(201).header('cache-control', 'no-store');
      return out;
    },
  );
  app.get<{ Params: SandboxIdParam }>(
    '/sandboxes/:sandbox_id/preview-ports',
    { onRequest, schema: { summary: 'List published preview ports', tags, params: SandboxIdParam, response: { 200: PreviewPortList, ...errors(400, 401, 403, 404) } } },
    async (req, reply) => {
      const p = principal(req);
      s.auth.require(p, 'sandboxes:read');
      reply.header('cache-control', 'no-store');
      return { preview_ports: await s.previews.list(p, req.params.sandbox_id) };
    },
  );
  app.delete<{ Params: PreviewPortParams }>(
    '/sandboxes/:sandbox_id/preview-ports/:port',
    {
      onRequest,
      schema: { summary: 'Unpublish a preview port', tags, params: PreviewPortParams, response: { 204: Type.Null(), ...errors(400, 401, 403, 404) } },
    },
    async (req, reply) => {
      const p = principal(req);
      s.auth.require(p, 'sandboxes:write');
      const params = req.params;
      await s.previews.unpublish(p, params.sandbox_id, params.port);
      reply.code(204);
    },
  );
}
