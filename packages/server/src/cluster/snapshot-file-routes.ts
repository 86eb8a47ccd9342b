import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { notFound, unavailable } from '../errors.ts';
import type { RuntimeDriver, SnapshotTransfer } from '../runtime/driver.ts';
import { digestOrNotFound, ResumeBody, servePart, Transfer } from './part-serving.ts';

const params = Type.Object({ snapshot_id: Type.String({ pattern: '^[0-9a-f-]{36}$' }), part: Type.Optional(Type.String({ pattern: '^[a-z]{1,16}$' })) });

/**
 * A node's snapshot files for other nodes (the node guard has checked their token): a fork placed on
 * a node without the snapshot fetches them from here, the manifest first, then each part as a stream,
 * then the digest of what was sent.
 */
export async function snapshotFileRoutes(app: FastifyInstance, driver: RuntimeDriver, scratch: string) {
  const transfer = (): SnapshotTransfer => {
    const t = driver.snapshots?.transfer;
    if (!t) throw unavailable(`the ${driver.name} driver cannot ship snapshots`);
    return t;
  };
  app.get<{ Params: { snapshot_id: string } }>('/internal/snapshots/:snapshot_id/manifest', { schema: { hide: true, params } }, async (req) => {
    const m = await transfer().manifest(req.params.snapshot_id);
    if (!m) throw notFound('this node holds no complete copy of that snapshot');
    return m;
  });
  type PartRequest = FastifyRequest<{ Params: { snapshot_id: string; part: string }; Querystring: { transfer?: string }; Body?: ResumeBody }>;
  const part = async (req: PartRequest, reply: FastifyReply) => {
    const t = transfer();
    if (!(await driver.snapshots!.inspect(req.params.snapshot_id))) throw notFound('this node holds no complete copy of that snapshot');
    let root: string;
    try {
      root = t.partDir(req.params.snapshot_id, req.params.part);
    } catch {
      throw notFound(`a snapshot has no part '${req.params.part}'`);
    }
    await servePart(reply, scratch, root, req.query.transfer, req.body);
  };
  // GET: the whole part; POST: a resumed copy's rest (ResumeBody).
  app.get('/internal/snapshots/:snapshot_id/parts/:part', { schema: { hide: true, params, querystring: Transfer } }, part);
  app.post('/internal/snapshots/:snapshot_id/parts/:part', { schema: { hide: true, params, querystring: Transfer, body: ResumeBody } }, part);
  app.get<{ Params: { snapshot_id: string; part: string }; Querystring: { transfer: string } }>(
    '/internal/snapshots/:snapshot_id/parts/:part/digest',
    { schema: { hide: true, params, querystring: Type.Required(Transfer) } },
    async (req) => ({ digest: await digestOrNotFound(req.query.transfer) }),
  );
}
