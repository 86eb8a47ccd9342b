import type { FastifyRequest } from 'fastify';
import type { DiskSpace } from '../services/disk-space.ts';

/** Routes that put much on the data disk: a new layer, a checkpoint, a snapshot, a template, an upload. */
const WRITES: Record<string, string> = {
  'POST /sandboxes': 'creating a sandbox',
  'POST /sandboxes/:sandbox_id/pause': 'pausing (a checkpoint is written)',
  'POST /sandboxes/:sandbox_id/snapshot': 'taking a snapshot',
  'POST /templates': 'building a template',
  'PUT /files': 'uploading a file',
};

/** A preHandler that answers 507 before such a route starts while the data disk is down to its reserve. */
export function diskGuard(disk: DiskSpace) {
  return async (req: FastifyRequest): Promise<void> => {
    const what = WRITES[`${req.method} ${req.routeOptions.url}`];
    if (what) await disk.assertRoom(what);
  };
}
