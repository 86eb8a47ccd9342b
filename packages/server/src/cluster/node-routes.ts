import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../errors.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import type { SandboxStore } from '../store/sandboxes.ts';

/** A node's internal engine facts for its API replicas (the node guard has checked their token): disk sizes for metering. */
export async function nodeEngineRoutes(app: FastifyInstance, driver: RuntimeDriver, store: SandboxStore) {
  app.get<{ Params: { sandbox_id: string } }>(
    '/internal/engine/:sandbox_id/stats',
    { schema: { hide: true, params: Type.Object({ sandbox_id: Type.String({ pattern: '^[0-9a-f-]{36}$' }) }) } },
    async (req) => {
      const rec = await store.get(req.params.sandbox_id);
      if (!rec || rec.nodeId !== store.node) throw notFound('no such sandbox on this node');
      return driver.stats(rec.id);
    },
  );
}
