import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors, SandboxIdParam } from '../schemas/common.ts';
import { ControlExecResult, DataExecResult, ExecBody, ExecStreamEvent } from '../schemas/exec.ts';
import type { SandboxRecord } from '../store/sandboxes.ts';
import { apiKeyHook, principal, type Services } from './context.ts';
import { dataPlaneHeaders, dataPlaneHook, dataPlaneSandbox } from './data-plane-auth.ts';
import { openEventStream } from './sse.ts';

const STREAM_DOC = 'text/event-stream: each `data: ` line is one JSON event; the final event has finished: true; a `: keepalive` comment every 15 s';

/** Runs an opened exec as an SSE stream; errors before the first byte still answer in the envelope. */
async function streamExec(s: Services, rec: SandboxRecord, body: ExecBody, reply: FastifyReply) {
  const running = await s.exec.open(rec, body);
  const sse = openEventStream(reply);
  try {
    await s.exec.stream(running, sse.send, sse.signal);
  } finally {
    sse.end();
  }
}

export async function controlExecRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  const sandbox = async (req: FastifyRequest<{ Params: SandboxIdParam }>) => {
    s.auth.require(principal(req), 'sandboxes:write');
    return s.sandboxes.get(principal(req), req.params.sandbox_id);
  };
  app.post<{ Params: SandboxIdParam; Body: ExecBody }>(
    '/sandboxes/:sandbox_id/exec',
    {
      onRequest,
      schema: {
        summary: 'Run a command to completion (auto-resumes a paused sandbox)',
        tags: ['exec'],
        params: SandboxIdParam,
        body: ExecBody,
        response: { 200: ControlExecResult, ...errors(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req) => {
      const { truncated: _t, ...result } = await s.exec.run(await sandbox(req), req.body);
      return result;
    },
  );
  app.post<{ Params: SandboxIdParam; Body: ExecBody }>(
    '/sandboxes/:sandbox_id/exec/stream',
    {
      onRequest,
      schema: {
        summary: 'Run a command and stream its output as server-sent events',
        description: STREAM_DOC,
        tags: ['exec'],
        params: SandboxIdParam,
        body: ExecBody,
        response: { 200: { description: STREAM_DOC, content: { 'text/event-stream': { schema: ExecStreamEvent } } }, ...errors(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req, reply) => streamExec(s, await sandbox(req), req.body, reply),
  );
}

/** The data plane: the sandbox comes from the per-sandbox host name or X-Platform-Sandbox-Id; auth is X-Access-Token. */
export async function dataPlaneExecRoutes(app: FastifyInstance, s: Services) {
  const onRequest = dataPlaneHook(s);
  const headers = dataPlaneHeaders;
  const target = dataPlaneSandbox;
  app.post<{ Body: ExecBody }>(
    '/exec',
    {
      onRequest,
      schema: {
        summary: 'Data plane: run a command to completion (8 MiB retained output)',
        tags: ['data plane'],
        security: [{ AccessToken: [] }],
        headers,
        body: ExecBody,
        response: { 200: DataExecResult, ...errors(400, 401, 404, 409, 503) },
      },
    },
    async (req) => s.exec.run(target(req), req.body),
  );
  app.post<{ Body: ExecBody }>(
    '/exec/stream',
    {
      onRequest,
      schema: {
        summary: 'Data plane: run a command and stream its output as server-sent events',
        description: STREAM_DOC,
        tags: ['data plane'],
        security: [{ AccessToken: [] }],
        headers,
        body: ExecBody,
        response: { 200: { description: STREAM_DOC, content: { 'text/event-stream': { schema: ExecStreamEvent } } }, ...errors(400, 401, 404, 409, 503) },
      },
    },
    async (req, reply) => streamExec(s, target(req), req.body, reply),
  );
}
