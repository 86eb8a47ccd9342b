import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, rawErrorResponse } from '../errors.ts';
import { PREVIEW_HOST, type PreviewCredentials } from '../services/networking/preview-ports.ts';
import { SandboxPortProxy } from '../services/networking/sandbox-port-proxy.ts';
import type { Services } from './context.ts';

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

const hostName = (host: string | undefined) => (host ?? '').replace(/:\d+$/, '');

/**
 * Preview traffic shares the API listener: requests whose Host is `{port}-{sandbox}.preview.<host>`
 * are proxied (HTTP and WebSocket) to the port inside the sandbox before any API route runs.
 */
export async function previewGateway(app: FastifyInstance, s: Services) {
  const proxy = new SandboxPortProxy((reason) => ({ status: 502, body: { error: { code: 'bad_gateway', message: reason } } }));
  s.connections.register((id) => proxy.close(id));
  proxy.onResponse((proxyRes, req) => {
    const token = queryToken(req.url);
    if (!token || !/^[A-Za-z0-9_-]+$/.test(token)) return;
    const set = proxyRes.headers['set-cookie'] ?? [];
    proxyRes.headers['set-cookie'] = [...set, `${TOKEN_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax`];
  });

  app.addHook('onRequest', async (req: FastifyRequest, reply) => {
    const m = PREVIEW_HOST.exec(req.hostname);
    if (!m) return;
    const target = await s.previews.route(Number(m[1]), m[2]!, credentials(req.headers, req.url));
    reply.hijack();
    proxy.web(req.raw, reply.raw, target);
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
      .then((target) => proxy.ws(req, socket, head, target))
      .catch((err: unknown) => {
        socket.end(rawErrorResponse(err instanceof ApiError ? err : new ApiError(500, 'internal', 'internal error')));
      });
  });
}
