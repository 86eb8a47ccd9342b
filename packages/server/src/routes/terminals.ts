import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import type { WebSocket } from 'ws';
import { ApiError } from '../errors.ts';
import { errors } from '../schemas/common.ts';
import { TerminalBody, TerminalControl, TerminalIdParam, TerminalInfo, TerminalList } from '../schemas/terminal.ts';
import type { Session } from '../services/data-plane/sessions.ts';
import type { Services } from './context.ts';
import { dataPlaneHeaders as headers, dataPlaneHook, dataPlaneSandbox as target } from './data-plane-auth.ts';

const tags = ['terminals'];
const security = [{ AccessToken: [] }];

const FRAMING =
  'Connect with a WebSocket to GET /terminals/{id}/connect (same data-plane routing; browsers, which cannot set headers, may pass `access_token` and `sandbox_id` as query parameters). ' +
  'Server to client: binary frames carry raw terminal output (first the kept output, up to 256 KiB, so a reconnect repaints); a text frame `{"type":"exit","exit_code":n,"signal":n|null}` ' +
  'is sent when the process ends, then the socket closes with code 1000. Client to server: binary frames are raw input bytes; a text frame is a JSON control message ' +
  '`{"type":"resize","cols":n,"rows":n}` or `{"type":"input","data":"..."}`, and any other text frame is taken as raw input (so xterm.js AttachAddon works unchanged). ' +
  'The session outlives the socket; several sockets may be connected to one session at once. Close code 4404: no such terminal.';

declare module 'fastify' {
  interface FastifyRequest {
    terminal?: Session;
  }
}

/** Data-plane PTY sessions over WebSocket. */
export async function terminalRoutes(app: FastifyInstance, s: Services) {
  const onRequest = dataPlaneHook(s);

  app.post<{ Body: TerminalBody | undefined }>(
    '/terminals',
    {
      onRequest,
      schema: {
        summary: 'Create a terminal session (a PTY running as user; default `bash -l`, TERM=xterm-256color)',
        description: FRAMING,
        tags,
        security,
        headers,
        body: TerminalBody,
        response: { 201: Type.Ref('TerminalInfo'), ...errors(400, 401, 404, 409, 503) },
      },
    },
    async (req, reply) => reply.code(201).send(await s.terminals.create(target(req), req.body ?? {})),
  );

  app.get('/terminals', { onRequest, schema: { summary: 'List terminal sessions', tags, security, headers, response: { 200: TerminalList, ...errors(401, 404, 503) } } }, async (req) => ({
    terminals: await s.terminals.list(target(req)),
  }));

  app.get<{ Params: TerminalIdParam }>(
    '/terminals/:id',
    {
      onRequest,
      schema: { summary: 'A terminal session', description: FRAMING, tags, security, headers, params: TerminalIdParam, response: { 200: Type.Ref('TerminalInfo'), ...errors(401, 404, 503) } },
    },
    async (req) => s.terminals.get(target(req), req.params.id),
  );

  app.delete<{ Params: TerminalIdParam }>(
    '/terminals/:id',
    {
      onRequest,
      schema: {
        summary: 'End a terminal session (SIGKILL to its process group)',
        tags,
        security,
        headers,
        params: TerminalIdParam,
        response: { 204: Type.Null({ description: 'Ended' }), ...errors(401, 404, 503) },
      },
    },
    async (req, reply) => {
      await s.terminals.remove(target(req), req.params.id);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: TerminalIdParam }>(
    '/terminals/:id/connect',
    {
      websocket: true,
      onRequest: dataPlaneHook(s, { query: true }),
      // Looked up before the upgrade, so an unknown id is an ordinary 404 envelope.
      preHandler: async (req) => {
        req.terminal = await s.terminals.open(target(req), req.params.id);
      },
      schema: { params: TerminalIdParam },
    },
    (socket: WebSocket, req) => {
      const session = req.terminal!;
      const conn = s.terminals.connect(session, {
        output: (data) => socket.send(data, { binary: true }),
        exit: (exit) => {
          socket.send(JSON.stringify({ type: 'exit', exit_code: exit.exitCode, signal: exit.signal }));
          socket.close(1000, 'exited');
        },
      });
      socket.on('message', (data: Buffer, isBinary: boolean) => {
        if (isBinary) return conn.input(data);
        const msg = parseControl(data);
        if (!msg) return conn.input(data);
        try {
          if (msg.type === 'resize') conn.resize(msg.cols, msg.rows);
          else conn.input(Buffer.from(msg.data, 'utf8'));
        } catch (err) {
          if (err instanceof ApiError) socket.send(JSON.stringify({ type: 'error', code: err.code, message: err.message }));
        }
      });
      socket.on('close', () => conn.detach());
    },
  );
}

function parseControl(data: Buffer): TerminalControl | undefined {
  if (data[0] !== 0x7b) return undefined; // '{'
  try {
    const v: unknown = JSON.parse(data.toString('utf8'));
    return Value.Check(TerminalControl, v) ? v : undefined;
  } catch {
    return undefined;
  }
}

export const terminalSchemas = [TerminalInfo];
