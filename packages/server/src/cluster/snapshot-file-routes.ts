import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound, unavailable } from '../errors.ts';
import type { RuntimeDriver, SnapshotTransfer } from '../runtime/driver.ts';

const params = Type.Object({ snapshot_id: Type.String({ pattern: '^[0-9a-f-]{36}$' }), part: Type.Optional(Type.String({ pattern: '^[a-z]{1,16}$' })) });

/**
 * A node's snapshot files for other nodes (the node guard has checked their token): a fork placed on
 * a node without the snapshot fetches them from here, the manifest first, then each part as a stream.
 */
export async function snapshotFileRoutes(app: FastifyInstance, driver: RuntimeDriver) {
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
  app.get<{ Params: { snapshot_id: string; part: string } }>('/internal/snapshots/:snapshot_id/parts/:part', { schema: { hide: true, params } }, async (req, reply) => {
    const t = transfer();
    if (!(await driver.snapshots!.inspect(req.params.snapshot_id))) throw notFound('this node holds no complete copy of that snapshot');
    let stream: Readable;
    try {
      stream = t.pack(req.params.snapshot_id, req.params.part);
    } catch {
      throw notFound(`a snapshot has no part '${req.params.part}'`);
    }
    reply.type('application/x-tar');
    return stream;
  });
}
