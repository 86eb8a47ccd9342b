import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Empty, errors, SandboxIdParam } from '../schemas/common.ts';
import { CodeContext, CodeContextParams, CodeEvent, CreateCodeContextBody, RunCodeBody } from '../schemas/code.ts';
import { Type } from 'typebox';
import { apiKeyHook, principal, type Services } from './context.ts';
import { openEventStream } from './sse.ts';

const STREAM_DOC =
  'application/x-ndjson (default): one JSON event a line; text/event-stream when the Accept header asks for it. ' +
  'Events: stdout, stderr, result (a value or a display such as a PNG chart), error (name, value, traceback), execution_count; the last is end with everything the run produced.';

/** Code runs in a sandbox of platform/code-interpreter: Python, JavaScript and bash in kept contexts. */
export async function codeRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  const writer = (req: FastifyRequest) => {
    s.auth.require(principal(req), 'sandboxes:write');
    return principal(req);
  };
  app.post<{ Params: SandboxIdParam; Body: RunCodeBody }>(
    '/sandboxes/:sandbox_id/code/run',
    {
      onRequest,
      schema: {
        summary: 'Run code and stream its output and results (auto-resumes a paused sandbox)',
        description: STREAM_DOC,
        tags: ['code'],
        params: SandboxIdParam,
        body: RunCodeBody,
        response: {
          200: { description: STREAM_DOC, content: { 'application/x-ndjson': { schema: CodeEvent }, 'text/event-stream': { schema: CodeEvent } } },
          ...errors(400, 401, 403, 404, 409, 502, 503),
        },
      },
    },
    async (req, reply) => {
      const gone = new AbortController();
      reply.raw.on('close', () => gone.abort());
      const events = await s.code.run(writer(req), req.params.sandbox_id, req.body, gone.signal);
      if ((req.headers.accept ?? '').includes('text/event-stream')) {
        const sse = openEventStream(reply);
        try {
          for await (const ev of events) sse.send(ev);
        } finally {
          sse.end();
        }
        return;
      }
      reply.hijack();
      const res = reply.raw;
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, value);
      res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache, no-store', 'x-accel-buffering': 'no' });
      try {
        for await (const ev of events) if (!res.writableEnded) res.write(`${JSON.stringify(ev)}\n`);
      } finally {
        if (!res.writableEnded) res.end();
      }
    },
  );
  app.post<{ Params: SandboxIdParam; Body: CreateCodeContextBody }>(
    '/sandboxes/:sandbox_id/code/contexts',
    {
      onRequest,
      schema: {
        summary: 'Create a code context: a kernel of its own, whose state runs share',
        tags: ['code'],
        params: SandboxIdParam,
        body: CreateCodeContextBody,
        response: { 201: CodeContext, ...errors(400, 401, 403, 404, 409, 502, 503) },
      },
    },
    async (req, reply) => {
      const ctx = await s.code.createContext(writer(req), req.params.sandbox_id, req.body ?? {});
      return reply.code(201).send(ctx);
    },
  );
  app.get<{ Params: SandboxIdParam }>(
    '/sandboxes/:sandbox_id/code/contexts',
    {
      onRequest,
      schema: { summary: 'List code contexts (the default ones too)', tags: ['code'], params: SandboxIdParam, response: { 200: Type.Array(CodeContext), ...errors(401, 403, 404, 409, 502, 503) } },
    },
    async (req) => s.code.listContexts(writer(req), req.params.sandbox_id),
  );
  app.post<{ Params: CodeContextParams }>(
    '/sandboxes/:sandbox_id/code/contexts/:context_id/restart',
    {
      onRequest,
      schema: { summary: 'Restart a code context: its state is cleared', tags: ['code'], params: CodeContextParams, response: { 204: Empty, ...errors(401, 403, 404, 409, 502, 503) } },
    },
    async (req, reply) => {
      await s.code.restartContext(writer(req), req.params.sandbox_id, req.params.context_id);
      return reply.code(204).send();
    },
  );
  app.delete<{ Params: CodeContextParams }>(
    '/sandboxes/:sandbox_id/code/contexts/:context_id',
    {
      onRequest,
      schema: { summary: 'Remove a code context and stop its kernel', tags: ['code'], params: CodeContextParams, response: { 204: Empty, ...errors(401, 403, 404, 409, 502, 503) } },
    },
    async (req, reply) => {
      await s.code.removeContext(writer(req), req.params.sandbox_id, req.params.context_id);
      return reply.code(204).send();
    },
  );
}
