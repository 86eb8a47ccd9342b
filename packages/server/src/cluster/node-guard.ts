import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError, rawErrorResponse } from '../errors.ts';
import { INTERNAL_HEADER, nodeAudience, verifyInternalToken } from '../internal-token.ts';
import type { InternalChannel } from './internal-channel.ts';
import type { MemberRole } from './member-certificates.ts';

const tokenRefusal = new ApiError(401, 'unauthorized', 'this is a node: it serves only its API replicas (a valid internal token is required)');
/** Who calls a node: API replicas forwarding, and other nodes fetching copies. */
const CALLERS: readonly MemberRole[] = ['api', 'node'];

/**
 * A node (`SANDPIT_ROLE=node`) answers only requests its API replicas signed for it: the first hook
 * of every request, and of every WebSocket upgrade (previews included), checks the internal token,
 * and with internal TLS the caller's certificate. Only a GET of an `open` path (the probes of an
 * orchestrator, which holds neither) passes without them.
 */
export function guardNode(app: FastifyInstance, edge: { key: Buffer; nodeId: string; channel: InternalChannel }, open: readonly string[]): void {
  const audience = nodeAudience(edge.nodeId);
  const refusal = (req: IncomingMessage): ApiError | undefined => {
    const why = edge.channel.refusal(req.socket, CALLERS);
    if (why) return new ApiError(401, 'unauthorized', `this is a node: ${why}`);
    const v = req.headers[INTERNAL_HEADER];
    return verifyInternalToken(edge.key, Array.isArray(v) ? v[0] : v, audience) ? undefined : tokenRefusal;
  };
  app.addHook('onRequest', async (req) => {
    if (req.method === 'GET' && open.includes(req.url)) return;
    const err = refusal(req.raw);
    if (err) throw err;
  });
  // Ahead of every other upgrade listener: a refused upgrade's socket is closed before they see it.
  app.server.prependListener('upgrade', (req: IncomingMessage, socket: Socket) => {
    const err = refusal(req);
    if (!err) return;
    socket.end(rawErrorResponse(err));
    socket.destroy();
  });
}
