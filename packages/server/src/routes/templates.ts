import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { iso } from '../clock.ts';
import { errors } from '../schemas/common.ts';
import { BuildParams, CreateTemplateBody, TEMPLATE_BODY_LIMIT, TemplateBuild, TemplateIdParam, TemplateList, TemplateWithBuild } from '../schemas/template.ts';
import { templateView } from '../services/templates/template-view.ts';
import type { BuildRecord, TemplateRecord } from '../store/templates.ts';
import { apiKeyHook, principal, type Services } from './context.ts';
import { openEventStream } from './sse.ts';

export async function templateRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  const read = (req: FastifyRequest) => s.auth.require(principal(req), 'sandboxes:read');
  const write = (req: FastifyRequest) => s.auth.require(principal(req), 'sandboxes:write');
  const tags = ['templates'];
  const view = (t: TemplateRecord) => templateView(t, s.warmPool.ready(t.id));

  app.post<{ Body: CreateTemplateBody }>(
    '/templates',
    {
      onRequest,
      bodyLimit: TEMPLATE_BODY_LIMIT,
      schema: {
        summary: 'Build a template (or rebuild one of the same name) from a base template, a container image or a Dockerfile, and steps',
        description:
          'Answers 202 at once with the template (status building, or the previous status on a rebuild) and build_id; the build runs in sandboxes of its own. ' +
          'Follow it with GET /templates/{id}/builds/{build_id}/logs (SSE) or poll GET /templates/{id}. It ends ready, or failed with error `<code>: <detail>`. ' +
          "Inline files (copy steps) are at most 4 MiB each, and the request at most 8 MiB. 429 too_many_builds / too_many_templates at the team's limits.",
        tags,
        body: CreateTemplateBody,
        response: { 202: TemplateWithBuild, ...errors(400, 401, 403, 404, 409, 413, 429, 507) },
      },
    },
    async (req, reply) => {
      write(req);
      const { template, build } = await s.templates.create(principal(req), req.body);
      reply.code(202);
      return { ...view(template), build_id: build.id };
    },
  );

  app.get('/templates', { onRequest, schema: { summary: "Curated platform/* templates and the team's own", tags, response: { 200: TemplateList, ...errors(401, 403) } } }, async (req) => {
    read(req);
    return { templates: (await s.templates.list(principal(req))).map(view) };
  });

  app.get<{ Params: TemplateIdParam }>(
    '/templates/:template_id',
    { onRequest, schema: { summary: 'Get a template by UUID or name', tags, params: TemplateIdParam, response: { 200: Type.Ref('Template'), ...errors(401, 403, 404) } } },
    async (req) => {
      read(req);
      return view(await s.templates.get(principal(req), req.params.template_id));
    },
  );

  app.delete<{ Params: TemplateIdParam }>(
    '/templates/:template_id',
    {
      onRequest,
      schema: {
        summary: 'Delete a team template (409 while sandboxes use it or it is building; 403 for platform/*)',
        tags,
        params: TemplateIdParam,
        response: { 204: Type.Null(), ...errors(401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      write(req);
      const t = await s.templates.delete(principal(req), req.params.template_id);
      await s.warmPool.forget(t.id);
      reply.code(204);
    },
  );

  app.get<{ Params: BuildParams }>(
    '/templates/:template_id/builds/:build_id',
    { onRequest, schema: { summary: 'A build: status, error and which steps ran or came from the cache', tags, params: BuildParams, response: { 200: TemplateBuild, ...errors(401, 403, 404) } } },
    async (req) => {
      read(req);
      const p = req.params;
      return buildView(await s.templates.getBuild(principal(req), p.template_id, p.build_id));
    },
  );

  app.get<{ Params: BuildParams }>(
    '/templates/:template_id/builds/:build_id/logs',
    {
      onRequest,
      schema: {
        summary: 'The build log as server-sent events: every line so far, then live lines until the build ends',
        description:
          'Each event is `data: {"timestamp", "line"}`; the last one is `{"timestamp", "finished": true, "status": "ready"|"failed", "error"?}`, after which the stream closes. ' +
          'Step output (stdout and stderr) and which steps ran or were cached appear as lines.',
        tags,
        params: BuildParams,
        response: { 200: Type.String({ description: 'text/event-stream' }), ...errors(401, 403, 404) },
      },
    },
    async (req, reply) => {
      read(req);
      const p = req.params;
      const { past, live } = await s.templates.buildLog(principal(req), p.template_id, p.build_id);
      const stream = openEventStream(reply);
      for (const ev of past) stream.send(ev);
      if (!live) return stream.end();
      await new Promise<void>((resolve) => {
        const onEvent = (ev: { finished?: boolean }) => {
          stream.send(ev);
          if (ev.finished) done();
        };
        const done = () => {
          live.off('event', onEvent);
          stream.signal.removeEventListener('abort', done);
          resolve();
        };
        live.on('event', onEvent);
        stream.signal.addEventListener('abort', done, { once: true });
      });
      stream.end();
    },
  );
}

function buildView(b: BuildRecord) {
  return {
    id: b.id,
    template_id: b.templateId,
    status: b.status as 'building' | 'ready' | 'failed',
    ...(b.error ? { error: b.error } : {}),
    steps: b.steps,
    created_at: iso(b.createdAt),
    ...(b.finishedAt ? { finished_at: iso(b.finishedAt) } : {}),
  };
}
