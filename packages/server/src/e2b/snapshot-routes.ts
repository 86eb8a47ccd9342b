import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, notFound } from '../errors.ts';
import type { AuthService } from '../services/access/auth.ts';
import type { Principal } from '../services/access/principal.ts';
import type { SnapshotService } from '../services/snapshots/snapshots.ts';
import type { SnapshotRecord } from '../store/snapshots.ts';
import type { TeamTemplates } from '../services/templates/team-templates.ts';
import { e2bCaller } from './caller.ts';
import { e2bAuditAs } from '../services/audit/audit-actions.ts';

interface SnapshotsQuery {
  sandboxID?: string;
  name?: string;
  limit?: string;
  nextToken?: string;
}

/** How often a capture answered in the background is looked at: E2B's create answers once the snapshot is usable. */
const POLL_MS = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** E2B's `SnapshotInfo`: Sandpit's snapshot id is the name to start sandboxes from, its label the other name. */
const snapshotInfo = (s: SnapshotRecord) => ({ snapshotID: s.id, names: s.name ? [s.name, s.id] : [s.id] });

/** The ready snapshot a create's `templateID` names, when it names one of the team's (E2B starts sandboxes from snapshots by id). */
export async function snapshotOf(snapshots: SnapshotService | undefined, p: Principal, templateID: string): Promise<SnapshotRecord | undefined> {
  if (!snapshots || !UUID.test(templateID)) return undefined;
  return snapshots.get(p, templateID).catch((err: unknown) => {
    if (err instanceof ApiError && err.status === 404) return undefined;
    throw err;
  });
}

/** Captures a snapshot and waits until it can be started from: E2B answers only then. */
export async function readySnapshot(snapshots: SnapshotService, p: Principal, sandboxId: string, name: string | undefined): Promise<SnapshotRecord> {
  let { snapshot } = await snapshots.create(p, sandboxId, name ? { name } : {});
  while (snapshot.status === 'creating') {
    await sleep(POLL_MS);
    snapshot = await snapshots.get(p, snapshot.id);
  }
  if (snapshot.status !== 'ready') throw new ApiError(500, 'internal', 'the snapshot could not be captured');
  return snapshot;
}

/** E2B's snapshot API (`POST /sandboxes/{id}/snapshots`, `GET /snapshots`, `DELETE /templates/{id}`) over Sandpit's snapshots. */
export async function snapshotRoutes(app: FastifyInstance, deps: { auth: AuthService; snapshots: SnapshotService; templates?: TeamTemplates }) {
  const { auth, snapshots } = deps;
  // Sets the request's principal too, so these calls reach the audit log.
  const caller = e2bCaller(auth);

  app.post('/sandboxes/:sandboxID/snapshots', async (req: FastifyRequest<{ Params: { sandboxID: string }; Body: { name?: string } | undefined }>, reply) => {
    const p = await caller(req, 'sandboxes:write');
    return reply.code(201).send(snapshotInfo(await readySnapshot(snapshots, p, req.params.sandboxID, req.body?.name)));
  });

  app.get('/snapshots', async (req: FastifyRequest<{ Querystring: SnapshotsQuery }>, reply) => {
    const p = await caller(req, 'sandboxes:read');
    const q = req.query;
    const page = await snapshots.list(p, { sandbox_id: q.sandboxID, limit: q.limit, cursor: q.nextToken });
    if (page.nextCursor) reply.header('x-next-token', page.nextCursor);
    return page.items.filter((s) => s.status === 'ready' && (q.name === undefined || s.name === q.name || s.id === q.name)).map(snapshotInfo);
  });

  // E2B names snapshots and templates alike: a snapshot of that id goes, else the team's template (id or name).
  app.delete('/templates/:templateID', async (req: FastifyRequest<{ Params: { templateID: string } }>, reply) => {
    const p = await caller(req, 'sandboxes:write');
    const id = req.params.templateID;
    const snapshot = await snapshotOf(snapshots, p, id);
    if (snapshot) await snapshots.delete(p, id);
    else if (deps.templates) {
      auth.require(p, 'templates:write');
      e2bAuditAs(req, 'template.delete');
      await deps.templates.delete(p, id);
    } else throw notFound(`template '${id.slice(0, 64)}' not found`);
    return reply.code(204).send();
  });
}
