import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errors } from '../schemas/common.ts';
import { ExecStreamEvent } from '../schemas/exec.ts';
import { ProcessBody, ProcessIdParam, ProcessInfo, ProcessList, ProcessOutput, SignalBody, StdinBody } from '../schemas/process.ts';
import type { Services } from './context.ts';
import { dataPlaneHeaders as headers, dataPlaneHook, dataPlaneSandbox as target } from './data-plane-auth.ts';
import { openEventStream } from './sse.ts';

const tags = ['processes'];
const security = [{ AccessToken: [] }];
const STREAM_DOC =
  'text/event-stream of exec stream events: the kept output first (last 1 MiB), then live output; a final event with exit_code and finished: true when the process exits; a `: keepalive` comment every 15 s. Closing the stream does not stop the process.';
const ABOUT =
  'Background processes run as `user`, outlive the request, client disconnects and pause/resume (the container driver keeps them in RAM), and are found again after a server restart. The last 1 MiB of output is kept on the host.';

/** Data-plane background processes. */
export async function processRoutes(app: FastifyInstance, s: Services) {
  const onRequest = dataPlaneHook(s);

  app.post<{ Body: ProcessBody }>(
    '/processes',
    {
      onRequest,
      schema: {
        summary: 'Start a background process (returns at once)',
        description: `${ABOUT} A command that cannot be started (missing binary or working_dir) is 400.`,
        tags,
        security,
        headers,
        body: ProcessBody,
        response: { 201: Type.Ref('ProcessInfo'), ...errors(400, 401, 404, 409, 503) },
      },
    },
    async (req, reply) => reply.code(201).send(await s.processes.start(target(req), req.body)),
  );

  app.get(
    '/processes',
    {
      onRequest,
      schema: { summary: 'List background processes (running, and recently exited)', description: ABOUT, tags, security, headers, response: { 200: ProcessList, ...errors(401, 404, 503) } },
    },
    async (req) => ({ processes: await s.processes.list(target(req)) }),
  );

  app.get<{ Params: ProcessIdParam }>(
    '/processes/:id',
    { onRequest, schema: { summary: 'A background process', tags, security, headers, params: ProcessIdParam, response: { 200: Type.Ref('ProcessInfo'), ...errors(401, 404, 503) } } },
    async (req) => s.processes.get(target(req), req.params.id),
  );

  app.get<{ Params: ProcessIdParam }>(
    '/processes/:id/output',
    {
      onRequest,
      schema: {
        summary: 'Output so far (last 1 MiB, UTF-8 with U+FFFD for invalid bytes)',
        tags,
        security,
        headers,
        params: ProcessIdParam,
        response: { 200: ProcessOutput, ...errors(401, 404, 503) },
      },
    },
    async (req) => s.processes.output(target(req), req.params.id),
  );

  app.get<{ Params: ProcessIdParam }>(
    '/processes/:id/stream',
    {
      onRequest,
      schema: {
        summary: 'Stream output (server-sent events)',
        description: STREAM_DOC,
        tags,
        security,
        headers,
        params: ProcessIdParam,
        response: { 200: { description: STREAM_DOC, content: { 'text/event-stream': { schema: ExecStreamEvent } } }, ...errors(401, 404, 503) },
      },
    },
    async (req, reply) => {
      const run = await s.processes.stream(target(req), req.params.id);
      const sse = openEventStream(reply);
      try {
        await run(sse.send, sse.signal);
      } finally {
        sse.end();
      }
    },
  );

  app.post<{ Params: ProcessIdParam; Body: StdinBody }>(
    '/processes/:id/stdin',
    {
      onRequest,
      schema: {
        summary: 'Write to stdin',
        description: '204 once the sandbox took the input. 409 conflict when the process has exited, or is not reading and 4 MiB of earlier input are still pending (this input was dropped).',
        tags,
        security,
        headers,
        params: ProcessIdParam,
        body: StdinBody,
        response: { 204: Type.Null({ description: 'Written' }), ...errors(400, 401, 404, 409, 503) },
      },
    },
    async (req, reply) => {
      const body = req.body;
      await s.processes.writeStdin(target(req), req.params.id, Buffer.from(body.data, body.encoding === 'base64' ? 'base64' : 'utf8'), body.eof ?? false);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: ProcessIdParam; Body: SignalBody }>(
    '/processes/:id/signal',
    {
      onRequest,
      schema: {
        summary: 'Send a signal to the process group',
        tags,
        security,
        headers,
        params: ProcessIdParam,
        body: SignalBody,
        response: { 204: Type.Null({ description: 'Sent' }), ...errors(400, 401, 404, 409, 503) },
      },
    },
    async (req, reply) => {
      await s.processes.signal(target(req), req.params.id, req.body.signal);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: ProcessIdParam }>(
    '/processes/:id',
    {
      onRequest,
      schema: {
        summary: 'Kill (SIGKILL, whole process group) if running, and forget the process',
        tags,
        security,
        headers,
        params: ProcessIdParam,
        response: { 204: Type.Null({ description: 'Removed' }), ...errors(401, 404, 503) },
      },
    },
    async (req, reply) => {
      await s.processes.remove(target(req), req.params.id);
      return reply.code(204).send();
    },
  );
}

export const processSchemas = [ProcessInfo];
