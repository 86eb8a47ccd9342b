import { Agent, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createProxyServer } from 'http-proxy-3';
import { ApiError, rawErrorResponse } from '../errors.ts';
import { PREVIEW_HOST, type PreviewCredentials } from '../services/networking/preview-ports.ts';
import type { Services } from './context.ts';
import { PreviewUpstreams } from './preview-upstreams.ts';

/** The cookie a `?preview_token=` page load sets, so the page's own requests (scripts, its WebSocket) carry the token too. */
const TOKEN_COOKIE = 'sandpit_preview_token';

const queryToken = (url: string | undefined) => new URLSearchParams((url ?? '').split('?')[1] ?? '').get('preview_token') ?? undefined;

function cookieToken(cookie: string | undefined): string | undefined {
  for (const part of (cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=');
    if (name === TOKEN_COOKIE && value) return value;
  }
  return undefined;
}

function credentials(headers: IncomingMessage['headers'], url: string | undefined): PreviewCredentials {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return {
    previewToken: one(headers['x-preview-token']) ?? queryToken(url) ?? cookieToken(headers.cookie),
    accessToken: one(headers['x-access-token']),
  };
}

const IDLE_UPSTREAM_MS = 1000;

const hostName = (host: string | undefined) => (host ?? '').replace(/:\d+$/, '');

/**
 * Preview traffic shares the API listener: requests whose Host is `{port}-{sandbox}.preview.<host>`
 * are proxied (HTTP and WebSocket) to the port inside the sandbox before any API route runs.
 */
export async function previewGateway(app: FastifyInstance, s: Services) {
  // Kept-alive connections to sandboxes: a fresh TCP handshake per request doubled the overhead. An idle
  // one is closed after a second, before the sandbox's server would (Node's 5 s, gunicorn's 2 s): the side
  // that closes first keeps TIME_WAIT, which gVisor cannot checkpoint for a minute.
  const proxy = createProxyServer({ xfwd: true, proxyTimeout: 0, agent: new Agent({ keepAlive: true, maxSockets: 64, timeout: IDLE_UPSTREAM_MS }) });
  // Which sandbox each proxied request is for, so its upstream sockets can be closed before a capture.
  const sandboxOf = new WeakMap<IncomingMessage, string>();
  const upstreams = new PreviewUpstreams();
  s.connections.register((id) => upstreams.close(id));
  const track = (req: IncomingMessage, socket: Socket) => {
    const id = sandboxOf.get(req);
    if (id) upstreams.track(id, socket);
  };
  // HTTP requests are told with their socket; an upgrade before it has one.
  proxy.on('proxyReq', (_proxyReq, req, _res, _options, socket) => track(req, socket));
  proxy.on('proxyReqWs', (proxyReq, req) => proxyReq.once('socket', (socket: Socket) => track(req, socket)));
  proxy.on('proxyRes', (proxyRes, req) => {
    const token = queryToken(req.url);
    if (!token || !/^[A-Za-z0-9_-]+$/.test(token)) return;
    const set = proxyRes.headers['set-cookie'] ?? [];
    proxyRes.headers['set-cookie'] = [...set, `${TOKEN_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax`];
  });
  proxy.on('error', (err, _req, res) => {
    const body = JSON.stringify({ error: { code: 'bad_gateway', message: `the sandbox did not answer on this port: ${(err as NodeJS.ErrnoException).code ?? err.message}` } });
    if ('writeHead' in res) {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(body);
    } else {
      (res as Socket).destroy();
    }
  });

  app.addHook('onRequest', async (req: FastifyRequest, reply) => {
    const m = PREVIEW_HOST.exec(req.hostname);
    if (!m) return;
    const target = await s.previews.route(Number(m[1]), m[2]!, credentials(req.headers, req.url));
    reply.hijack();
    sandboxOf.set(req.raw, target.sandboxId);
    proxy.web(req.raw, reply.raw, { target: { host: target.host, port: target.port } });
  });

  app.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const m = PREVIEW_HOST.exec(hostName(req.headers.host));
    if (!m) {
      // Nobody else takes upgrades on this listener: refuse rather than leave the socket hanging.
      if (app.server.listenerCount('upgrade') === 1) socket.destroy();
      return;
    }
    socket.on('error', () => undefined);
    s.previews
      .route(Number(m[1]), m[2]!, credentials(req.headers, req.url))
      .then((target) => {
        sandboxOf.set(req, target.sandboxId);
        proxy.ws(req, socket, head, { target: { host: target.host, port: target.port } });
      })
      .catch((err: unknown) => {
        socket.end(rawErrorResponse(err instanceof ApiError ? err : new ApiError(500, 'internal', 'internal error')));
      });
  });
}
