import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { errors, SandboxIdParam } from '../schemas/common.ts';
import { CursorPosition, DesktopAction, LiveView, LiveViewBody, ScreenSize, ScreenshotQuery } from '../schemas/desktop.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

export async function desktopRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  const tags = ['desktop'];
  const caller = (req: FastifyRequest, scope: 'sandboxes:read' | 'sandboxes:write') => {
    const p = principal(req);
    s.auth.require(p, scope);
    return p;
  };
  app.get<{ Params: SandboxIdParam; Querystring: ScreenshotQuery }>(
    '/sandboxes/:sandbox_id/desktop/screenshot',
    {
      onRequest,
      schema: {
        summary: 'A PNG of the desktop, or of a region (auto-resumes a paused sandbox)',
        tags,
        params: SandboxIdParam,
        querystring: ScreenshotQuery,
        response: { 200: { description: 'image/png', content: { 'image/png': { schema: Type.String({ format: 'binary' }) } } }, ...errors(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req, reply) => {
      const png = await s.desktop.screenshot(caller(req, 'sandboxes:write'), req.params.sandbox_id, req.query);
      reply.type('image/png').header('cache-control', 'no-store');
      return png;
    },
  );
  app.post<{ Params: SandboxIdParam; Body: DesktopAction }>(
    '/sandboxes/:sandbox_id/desktop/actions',
    {
      onRequest,
      schema: {
        summary: 'Mouse, keyboard or open a file or URL on the desktop; answers once the input was sent',
        tags,
        params: SandboxIdParam,
        body: DesktopAction,
        response: { 204: Type.Null(), ...errors(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req, reply) => {
      await s.desktop.act(caller(req, 'sandboxes:write'), req.params.sandbox_id, req.body);
      reply.code(204);
    },
  );
  app.get<{ Params: SandboxIdParam }>(
    '/sandboxes/:sandbox_id/desktop/cursor',
    { onRequest, schema: { summary: 'Where the pointer is', tags, params: SandboxIdParam, response: { 200: CursorPosition, ...errors(400, 401, 403, 404, 409, 503) } } },
    async (req) => s.desktop.cursor(caller(req, 'sandboxes:write'), req.params.sandbox_id),
  );
  app.get<{ Params: SandboxIdParam }>(
    '/sandboxes/:sandbox_id/desktop/screen',
    { onRequest, schema: { summary: 'The screen size in pixels', tags, params: SandboxIdParam, response: { 200: ScreenSize, ...errors(400, 401, 403, 404, 409, 503) } } },
    async (req) => s.desktop.screen(caller(req, 'sandboxes:write'), req.params.sandbox_id),
  );
  app.post<{ Params: SandboxIdParam; Body: LiveViewBody }>(
    '/sandboxes/:sandbox_id/desktop/live-view',
    {
      onRequest,
      schema: {
        summary: 'A noVNC link to watch (view_only) or drive the desktop, on a private preview port with a short-lived view token',
        tags,
        params: SandboxIdParam,
        body: LiveViewBody,
        response: { 201: LiveView, ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const out = await s.desktop.liveView(caller(req, 'sandboxes:write'), req.params.sandbox_id, req.body ?? {});
      reply.code(201).header('cache-control', 'no-store');
      return out;
    },
  );
}
