import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError, rawErrorResponse } from '../errors.ts';
import { INTERNAL_HEADER, nodeAudience, verifyInternalToken } from '../internal-token.ts';

const refusal = new ApiError(401, 'unauthorized', 'this is a node: it serves only its API replicas (a valid internal token is required)');

/**
 * A node (`SANDPIT_ROLE=node`) answers only requests its API replicas signed for it: the first hook
 * of every request, and of every WebSocket upgrade (previews included), checks the internal token.
 * Only a GET of an `open` path (the probes of an orchestrator, which holds no token) passes without one.
 */
export function guardNode(app: FastifyInstance, key: Buffer, nodeId: string, open: readonly string[]): void {
  const audience = nodeAudience(nodeId);
  const ok = (req: IncomingMessage) => {
    const v = req.headers[INTERNAL_HEADER];
    return verifyInternalToken(key, Array.isArray(v) ? v[0] : v, audience);
  };
  app.addHook('onRequest', async (req) => {
    if (req.method === 'GET' && open.includes(req.url)) return;
    if (!ok(req.raw)) throw refusal;
  });
  // Ahead of every other upgrade listener: a refused upgrade's socket is closed before they see it.
  app.server.prependListener('upgrade', (req: IncomingMessage, socket: Socket) => {
    if (ok(req)) return;
    socket.end(rawErrorResponse(refusal));
    socket.destroy();
  });
}
