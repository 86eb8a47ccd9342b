import type { FastifyInstance } from 'fastify';

/** Past this, reading a refused body to its end costs more than the client's retry on a fresh connection. */
const DRAIN_LIMIT = 256 * 1024 * 1024;

/**
 * A body refused for its size is read to its end and dropped instead of the connection being closed under it:
 * a client still writing the body would otherwise fail with EPIPE and never see the 413.
 */
export function drainOversizedBodies(app: FastifyInstance): void {
  app.addHook('onSend', (req, reply, payload, done) => {
    if (reply.statusCode === 413 && Number(req.headers['content-length']) <= DRAIN_LIMIT) reply.removeHeader('connection');
    done(null, payload);
  });
}
