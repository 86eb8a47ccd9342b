import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, forbidden } from '../errors.ts';
import type { PreviewPortService, PreviewTarget } from '../services/networking/preview-ports.ts';
import type { PlatformConnections } from '../services/sandboxes/platform-connections.ts';
import { SandboxPortProxy } from '../services/networking/sandbox-port-proxy.ts';
import { toE2bError } from './errors.ts';
import { ENVD_PORT, envdTarget } from './envd/target.ts';

export interface PortProxyDeps {
  previews: PreviewPortService;
  connections: PlatformConnections;
}

/** What E2B's proxy answers for a sandbox it does not know: 502, naming the id it read. */
const sandboxNotFound = (sandboxId: string) => ({ code: 502, message: 'The sandbox was not found', sandboxId });

/** Answers a refused upgrade on its raw socket, as a JSON body. */
function endWithJson(socket: Socket, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  socket.end(`HTTP/1.1 ${status} Error\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n${json}`);
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
/** The SDK sends the envd access token (`{id}.{token}`) or, for a sandbox without public traffic, the traffic token. */
const tokenOf = (headers: IncomingMessage['headers']) => {
  const raw = one(headers['x-access-token']) ?? one(headers['e2b-traffic-access-token']);
  return raw?.slice(raw.indexOf('.') + 1);
};

/** A request for a sandbox port other than envd's, or undefined. */
export function portTarget(headers: IncomingMessage['headers']) {
  const t = envdTarget(headers);
  return t && t.port !== ENVD_PORT ? t : undefined;
}

/**
 * Traffic for the other ports of a sandbox through the E2B port (`E2b-Sandbox-Port` or a `{port}-{id}` host),
 * such as the code interpreter's 49999: proxied, HTTP and WebSocket, by Sandpit's preview routing, which
 * resumes a paused sandbox. Published ports are reached as on preview URLs; the sandbox's access token
 * reaches any port.
 */
export async function portProxy(app: FastifyInstance, deps: PortProxyDeps) {
  const proxy = new SandboxPortProxy((reason) => ({ status: 502, body: { code: 502, message: reason } }));
  deps.connections.register((id) => proxy.close(id));
  /** The port's target; undefined for a sandbox that does not exist (or no longer runs anything). */
  const route = async (headers: IncomingMessage['headers'], target: { sandboxId: string; port: number }): Promise<PreviewTarget | undefined> => {
    try {
      return await deps.previews.route(target.port, target.sandboxId, { accessToken: tokenOf(headers) }, { tokenOpensAnyPort: true });
    } catch (err) {
      if (!(err instanceof ApiError) || (err.status !== 404 && err.status !== 400)) throw err;
      // A closed port is refused.
      if (/not published/.test(err.message)) throw forbidden(`port ${target.port} is not published and no access token of the sandbox was sent`);
      return undefined;
    }
  };

  app.addHook('onRequest', async (req: FastifyRequest, reply) => {
    const target = portTarget(req.headers);
    if (!target) return;
    const upstream = await route(req.headers, target);
    if (!upstream) return reply.code(502).send(sandboxNotFound(target.sandboxId));
    reply.hijack();
    proxy.web(req.raw, reply.raw, upstream);
  });

  app.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const target = portTarget(req.headers);
    if (!target) {
      if (app.server.listenerCount('upgrade') === 1) socket.destroy();
      return;
    }
    socket.on('error', () => undefined);
    route(req.headers, target)
      .then((upstream) => {
        if (upstream) return proxy.ws(req, socket, head, upstream);
        endWithJson(socket, 502, sandboxNotFound(target.sandboxId));
      })
      .catch((err: unknown) => {
        const { status, body } = toE2bError(err);
        endWithJson(socket, status, body);
      });
  });
}
