import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { unavailable } from '../errors.ts';
import { errors } from '../schemas/common.ts';
import type { Services } from './context.ts';

/** Probe paths, open on every role (a node's guard lets them through): they tell nothing about sandboxes. */
export const HEALTH_PATHS = ['/healthz', '/readyz'] as const;

export async function healthRoutes(app: FastifyInstance, s: Services) {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness: the process answers HTTP',
        tags: ['info'],
        security: [],
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: the store answers and, on a node, an API replica accepted its last heartbeat (503 otherwise)',
        tags: ['info'],
        security: [],
        response: {
          200: Type.Object({ ready: Type.Literal(true), checks: Type.Object({ store: Type.String(), registered: Type.Optional(Type.String()) }) }),
          ...errors(503),
        },
      },
    },
    async () => {
      const report = await s.readiness.check();
      if (!report.ready) {
        const failing = Object.entries(report.checks)
          .filter(([, v]) => v !== 'ok')
          .map(([k, v]) => `${k}: ${v}`);
        throw unavailable(`not ready (${failing.join('; ')})`);
      }
      return { ready: true as const, checks: report.checks };
    },
  );
}
