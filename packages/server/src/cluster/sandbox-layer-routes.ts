import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { notFound, unavailable } from '../errors.ts';
import type { RuntimeDriver, WritableLayer } from '../runtime/driver.ts';
import { layerIdentity } from '../services/data-plane/changes.ts';
import { digestOrNotFound, servePart, Transfer } from './part-serving.ts';

const params = Type.Object({ sandbox_id: Type.String({ pattern: '^[0-9a-f-]{36}$' }) });
type Params = { sandbox_id: string };

/**
 * A node's sandbox layers for other nodes (the node guard has checked their token): an apply of
 * changes into a sandbox on another node reads what this sandbox's layer starts from, then its upper
 * dir as one tar stream, then the digest of what was sent.
 */
export async function sandboxLayerRoutes(app: FastifyInstance, driver: RuntimeDriver, scratch: string): Promise<void> {
  const layerOf = async (id: string): Promise<WritableLayer> => {
    if (!driver.writableLayer) throw unavailable(`the ${driver.name} driver does not show sandbox layers`);
    const layer = await driver.writableLayer(id);
    if (!layer) throw notFound('this node holds no layer of that sandbox');
    return layer;
  };
  app.get<{ Params: Params }>('/internal/sandboxes/:sandbox_id/layer', { schema: { hide: true, params } }, async (req) => layerIdentity(await layerOf(req.params.sandbox_id)));
  app.get<{ Params: Params; Querystring: { transfer?: string } }>(
    '/internal/sandboxes/:sandbox_id/layer/upper',
    { schema: { hide: true, params, querystring: Transfer } },
    async (req: FastifyRequest<{ Params: Params; Querystring: { transfer?: string } }>, reply: FastifyReply) => {
      const layer = await layerOf(req.params.sandbox_id);
      await servePart(reply, scratch, layer.upper, req.query.transfer);
    },
  );
  app.get<{ Params: Params; Querystring: { transfer: string } }>(
    '/internal/sandboxes/:sandbox_id/layer/upper/digest',
    { schema: { hide: true, params, querystring: Type.Required(Transfer) } },
    async (req) => ({ digest: await digestOrNotFound(req.query.transfer) }),
  );
}
