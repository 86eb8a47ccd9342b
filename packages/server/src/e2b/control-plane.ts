import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Value } from 'typebox/value';
import { ApiError, badRequest, conflict, notFound } from '../errors.ts';
import { VolumeMount } from '../schemas/volume.ts';
import type { AuthService } from '../services/access/auth.ts';
import type { SandboxService } from '../services/sandboxes/sandboxes.ts';
import type { VolumeService } from '../services/volumes/volumes.ts';
import type { PreviewPortService } from '../services/networking/preview-ports.ts';
import type { SnapshotService } from '../services/snapshots/snapshots.ts';
import type { SandboxRecord } from '../store/sandboxes.ts';
import { e2bCaller } from './caller.ts';
import { type ListFilters, applyListFilters } from './list-filters.ts';
import { snapshotOf } from './snapshot-routes.ts';
import { checkTimeout, createTimers, setDeadline } from './lifetime.ts';
import { detailView, E2B_PUBLIC_PORTS, listedView, sandboxView, templateRef } from './sandbox-view.ts';
import { volumeMountsView } from './volume-mounts-view.ts';

interface NewSandbox {
  templateID?: string;
  timeout?: number;
  autoPause?: boolean;
  /** false: the auto-pause keeps only the filesystem, and resume cold-boots. */
  autoPauseMemory?: boolean;
  autoResume?: { enabled?: boolean };
  metadata?: Record<string, string>;
  envVars?: Record<string, string>;
  /** Volumes by name (or id) and where they go: Sandpit's `volumes`. */
  volumeMounts?: unknown;
  /** Only `allowPublicTraffic` is honoured: E2B's egress rules are not mapped. */
  network?: { allowPublicTraffic?: unknown };
}

interface ListQuery extends ListFilters {
  state?: string;
  metadata?: string;
  limit?: string;
  nextToken?: string;
}

type IdRequest = FastifyRequest<{ Params: { sandboxID: string } }>;

const STATES: Record<string, string[]> = { running: ['active', 'pausing'], paused: ['paused', 'resuming'] };

/** E2B's metadata filter: a query string of pairs whose keys and values are URL-encoded once more. */
function metadataFilter(raw: string | undefined): [string, string][] {
  if (!raw) return [];
  return [...new URLSearchParams(raw)].map(([k, v]) => [decodeURIComponent(k), decodeURIComponent(v)]);
}

/** An optional boolean field of a request body: absent, or a boolean (400 otherwise). */
function optionalBoolean(value: unknown, name: string): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') throw badRequest(`${name} must be a boolean`);
  return value;
}

/** E2B's SandboxVolumeMount list as Sandpit's mounts (read-write: E2B's have no read-only flag). */
function volumeMountsOf(raw: unknown): VolumeMount[] {
  if (!Array.isArray(raw)) throw badRequest('volumeMounts must be a list of {name, path}');
  return raw.map((m: { name?: unknown; path?: unknown } | null) => {
    const mount = { volume: m?.name, path: m?.path };
    if (!Value.Check(VolumeMount, mount)) throw badRequest('each of volumeMounts needs a volume name and an absolute path');
    return mount;
  });
}

/** E2B's control plane (spec/openapi.yml in e2b-dev/E2B), both generations of paths, over Sandpit's sandbox service. */
export async function controlPlaneRoutes(
  app: FastifyInstance,
  deps: { auth: AuthService; sandboxes: SandboxService; snapshots?: SnapshotService; previews: PreviewPortService; volumes?: VolumeService; e2bDomain?: string },
) {
  const { auth, sandboxes } = deps;
  const caller = e2bCaller(auth);

  app.get('/health', async (_req, reply) => reply.code(200).send({ status: 'ok' }));

  const create = async (req: FastifyRequest, reply: { code(n: number): unknown }) => {
    const p = await caller(req, 'sandboxes:write');
    const body = (req.body ?? {}) as NewSandbox;
    const timeout = checkTimeout(body.timeout);
    optionalBoolean(body.autoPauseMemory, 'autoPauseMemory');
    // Traffic alone never resumes a filesystem-only pause (E2B's rule): it would reboot the sandbox under the caller.
    if (body.autoPauseMemory === false && body.autoResume?.enabled === true)
      throw badRequest('autoResume cannot be combined with autoPauseMemory false: a filesystem-only pause must be resumed explicitly');
    const snapshot = await snapshotOf(deps.snapshots, p, body.templateID ?? '');
    const publicTraffic = optionalBoolean(body.network?.allowPublicTraffic, 'network.allowPublicTraffic');
    // E2B's ports are public unless allowPublicTraffic is false; then they need the traffic token.
    const previewAccess = publicTraffic === false ? 'public' : 'legacy_public';
    const rec = await sandboxes.create(
      p,
      {
        ...(snapshot ? { from_snapshot: snapshot.id } : { from_template: templateRef(body.templateID ?? 'base'), env: body.envVars }),
        metadata: body.metadata,
        ...(body.volumeMounts === undefined ? {} : { volumes: volumeMountsOf(body.volumeMounts) }),
        ...createTimers(timeout, body.autoPause === true),
        ...(body.autoPause === true && body.autoPauseMemory === false ? { auto_pause_keep_memory: false } : {}),
      },
      { previewAccess },
    );
    for (const port of E2B_PUBLIC_PORTS[rec.templateId] ?? []) await deps.previews.publish(p, rec.id, { port, access: 'public' }, Date.now());
    reply.code(201);
    return sandboxView(rec, deps.e2bDomain);
  };
  app.post('/sandboxes', create);
  app.post('/v2/sandboxes', create);

  const list = async (req: FastifyRequest<{ Querystring: ListQuery }>, statesDefault: string, paged: boolean) => {
    const p = await caller(req, 'sandboxes:read');
    const q = req.query;
    const states = (q.state ?? statesDefault).split(',').filter(Boolean);
    const status = states.flatMap((s) => STATES[s] ?? [s]).join(',');
    const page = await sandboxes.list(p, { status, metadata: metadataFilter(q.metadata), limit: paged ? q.limit : undefined, cursor: paged ? q.nextToken : undefined });
    const items = applyListFilters(page.items, q);
    const mounts = await volumeMountsView(
      deps.volumes,
      p,
      items.map((rec) => rec.id),
    );
    return { items: items.map((rec) => listedView(rec, mounts.get(rec.id))), next: page.nextCursor };
  };
  app.get('/sandboxes', async (req: FastifyRequest<{ Querystring: ListQuery }>) => (await list(req, 'running', false)).items);
  app.get('/v2/sandboxes', async (req: FastifyRequest<{ Querystring: ListQuery }>, reply) => {
    const { items, next } = await list(req, 'running,paused', true);
    if (next) reply.header('x-next-token', next);
    return items;
  });

  app.get('/sandboxes/:sandboxID', async (req: IdRequest) => {
    const p = await caller(req, 'sandboxes:read');
    const rec = await sandboxes.get(p, req.params.sandboxID);
    return detailView(rec, deps.e2bDomain, (await volumeMountsView(deps.volumes, p, [rec.id])).get(rec.id));
  });

  app.delete('/sandboxes/:sandboxID', async (req: IdRequest, reply) => {
    const p = await caller(req, 'sandboxes:write');
    // An id that is not one of Sandpit's is a sandbox that does not exist: E2B's `kill` answers false.
    await sandboxes.delete(p, req.params.sandboxID).catch((err: unknown) => {
      throw err instanceof ApiError && err.status === 400 ? notFound(`sandbox '${req.params.sandboxID.slice(0, 64)}' not found`) : err;
    });
    return reply.code(204).send();
  });

  /**
   * Sandboxes that die at their deadline (auto_delete_seconds 0) and were paused by hand: Sandpit would
   * delete them on pause, E2B keeps them, so the deletion is lifted while paused and put back on connect.
   * Kept in memory: after a restart such a sandbox resumes with E2B's default, kill at timeout.
   */
  const pausedKillers = new Set<string>();
  app.post('/sandboxes/:sandboxID/pause', async (req: IdRequest, reply) => {
    const p = await caller(req, 'sandboxes:write');
    let rec = await sandboxes.get(p, req.params.sandboxID);
    if (rec.status === 'active' && rec.autoDeleteSeconds === 0) {
      rec = await sandboxes.patch(p, rec.id, { auto_delete_seconds: null });
      pausedKillers.add(rec.id);
    }
    const memory = optionalBoolean((req.body as { memory?: unknown } | undefined)?.memory, 'memory');
    try {
      await sandboxes.pause(p, rec.id, { keepMemory: memory !== false });
    } catch (err) {
      const now = await sandboxes.get(p, rec.id).catch(() => undefined);
      if (now?.status === 'active' && pausedKillers.delete(rec.id)) await sandboxes.patch(p, rec.id, { auto_delete_seconds: 0 });
      throw err;
    }
    return reply.code(204).send();
  });
  /** The timers of a resumed sandbox: E2B's deadline from now, and how it ends then. */
  const resumedTimers = (rec: SandboxRecord, timeoutS: number, autoPause?: boolean) => {
    const kill = pausedKillers.delete(rec.id) || rec.autoDeleteSeconds === 0;
    return createTimers(timeoutS, autoPause ?? !kill);
  };

  /** E2B 404s the timeout of a paused sandbox; older SDKs' connect relies on it to resume instead. */
  app.post('/sandboxes/:sandboxID/timeout', async (req: IdRequest, reply) => {
    const p = await caller(req, 'sandboxes:write');
    const timeout = checkTimeout((req.body as { timeout?: number } | undefined)?.timeout, undefined);
    const rec = await sandboxes.get(p, req.params.sandboxID);
    if (rec.status !== 'active') throw notFound(`sandbox '${req.params.sandboxID}' is not running`);
    await setDeadline(sandboxes, p, rec, timeout);
    return reply.code(204).send();
  });

  /** Pre-v2 resume: 409 when running, 201 when resumed. */
  app.post('/sandboxes/:sandboxID/resume', async (req: IdRequest, reply) => {
    const p = await caller(req, 'sandboxes:write');
    const body = (req.body ?? {}) as { timeout?: number; autoPause?: boolean };
    const timeout = checkTimeout(body.timeout);
    const resumed = await sandboxes.resume(p, req.params.sandboxID);
    const rec = await sandboxes.patch(p, resumed.id, resumedTimers(resumed, timeout, body.autoPause));
    reply.code(201);
    return sandboxView(rec, deps.e2bDomain);
  });

  /** Connect: 200 when it was running (its deadline only ever extended), 201 when it was resumed. */
  const connect = async (req: IdRequest, reply: { code(n: number): unknown }) => {
    const p = await caller(req, 'sandboxes:write');
    const body = req.body as { timeout?: number; memory?: unknown } | undefined;
    const timeout = checkTimeout(body?.timeout);
    // memory false (the SDK's onResume 'reboot'): a paused sandbox boots from its disk instead of being restored.
    const memory = optionalBoolean(body?.memory, 'memory');
    const before = await sandboxes.get(p, req.params.sandboxID);
    if (before.status !== 'active' && before.status !== 'paused') throw conflict(`the sandbox is ${before.status}; retry shortly`);
    let rec: SandboxRecord = await sandboxes.activate(p, before.id, { keepMemory: memory !== false });
    const resumed = before.status === 'paused';
    rec = resumed ? await sandboxes.patch(p, rec.id, resumedTimers(rec, timeout)) : await setDeadline(sandboxes, p, rec, timeout, true);
    reply.code(resumed ? 201 : 200);
    return sandboxView(rec, deps.e2bDomain);
  };
  app.post('/sandboxes/:sandboxID/connect', connect);
  app.post('/v2/sandboxes/:sandboxID/connect', connect);
}
