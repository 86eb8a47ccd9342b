import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest } from '../errors.ts';
import { e2bCaller } from './caller.ts';
import type { AuthService } from '../services/access/auth.ts';
import type { SandboxService } from '../services/sandboxes/sandboxes.ts';
import type { SnapshotService } from '../services/snapshots/snapshots.ts';
import { toE2bError } from './errors.ts';
import { checkTimeout, createTimers } from './lifetime.ts';
import { sandboxView } from './sandbox-view.ts';
import { readySnapshot } from './snapshot-routes.ts';

/** Sandpit's cap on sandboxes started by one fork request. */
const MAX_FORKS = 20;

/**
 * `POST /sandboxes/{id}/fork {timeout, count}`: a snapshot of the running sandbox, `count` sandboxes started
 * from it (each answered on its own, as E2B does), then the snapshot is deleted: forks run on copies of it.
 */
export async function forkRoute(app: FastifyInstance, deps: { auth: AuthService; sandboxes: SandboxService; snapshots: SnapshotService; e2bDomain?: string }) {
  const { auth, sandboxes, snapshots } = deps;
  const caller = e2bCaller(auth);
  app.post('/sandboxes/:sandboxID/fork', async (req: FastifyRequest<{ Params: { sandboxID: string }; Body: { timeout?: number; count?: number } | undefined }>) => {
    const p = await caller(req, 'sandboxes:write');
    const count = req.body?.count ?? 1;
    if (!Number.isInteger(count) || count < 1 || count > MAX_FORKS) throw badRequest(`count must be an integer from 1 to ${MAX_FORKS}`);
    const timers = createTimers(checkTimeout(req.body?.timeout), false);
    const snapshot = await readySnapshot(snapshots, p, req.params.sandboxID, undefined);
    try {
      return await Promise.all(
        Array.from({ length: count }, () =>
          sandboxes.create(p, { from_snapshot: snapshot.id, ...timers }).then(
            (rec) => ({ sandbox: sandboxView(rec, deps.e2bDomain) }),
            (err: unknown) => ({ error: toE2bError(err).body }),
          ),
        ),
      );
    } finally {
      await snapshots.delete(p, snapshot.id).catch((err: unknown) => req.log.warn({ err: String(err) }, 'e2b fork: the snapshot was not deleted'));
    }
  });
}
