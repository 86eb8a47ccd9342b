import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Services } from './context.ts';

/** Operator metrics in the Prometheus text format; registered first so its hook times every route. */
export async function metricsRoutes(app: FastifyInstance, s: Services) {
  const { metrics } = s;
  app.addHook('onResponse', async (req, reply) => {
    // The route pattern, never the raw URL, keeps label cardinality bounded.
    const route = req.routeOptions.url ?? 'unmatched';
    metrics.httpDuration.observe({ method: req.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });
  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics for operators: sandboxes by status, API and engine latency',
        description: 'No API key: it carries no team data, only counts and latencies. Restrict it at the network edge if needed.',
        tags: ['operations'],
        security: [],
        response: { 200: Type.String({ description: 'Prometheus text exposition format' }) },
      },
    },
    async (_req, reply) => {
      reply.header('content-type', metrics.registry.contentType);
      return metrics.registry.metrics();
    },
  );
}
