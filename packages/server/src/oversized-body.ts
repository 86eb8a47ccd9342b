import type { FastifyInstance } from 'fastify';

/**
 * Body bytes read and dropped after a refused request so the client sees the answer; past this, reading on
 * costs more than the client's retry on a fresh connection, and the connection closes instead.
 */
export const DISCARD_MAX = 256 * 1024 * 1024;

/**
 * A body the framework refuses for its declared size, before reading any of it, is read to its end and
 * dropped instead of the connection being closed under it: a client still writing the body would otherwise
 * fail with EPIPE and never see the 413. Routes that refuse an upload part-way keep closing the connection.
 */
export function drainOversizedBodies(app: FastifyInstance): void {
  app.addHook('onError', (req, reply, err, done) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' && !req.raw.readableDidRead && Number(req.headers['content-length']) <= DISCARD_MAX) {
      reply.removeHeader('connection');
    }
    done();
  });
}
