import fastifyRateLimit from '@fastify/rate-limit';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import { parseSandboxIdLoose, taggedSandboxId } from '../ids.ts';
import { E2B_ACTIONS, e2bActionOf } from '../services/audit/audit-actions.ts';
import type { AuditLog } from '../services/audit/audit-log.ts';
import type { AuthService } from '../services/access/auth.ts';
import type { FileService } from '../services/data-plane/files.ts';
import type { SharedRateLimits } from '../services/access/rate-limits.ts';
import type { SessionRegistry } from '../services/data-plane/sessions.ts';
import type { SandboxMetrics } from '../services/sandboxes/sandbox-metrics.ts';
import type { SandboxService } from '../services/sandboxes/sandboxes.ts';
import type { SnapshotService } from '../services/snapshots/snapshots.ts';
import type { PreviewPortService } from '../services/networking/preview-ports.ts';
import type { PlatformConnections } from '../services/sandboxes/platform-connections.ts';
import type { VolumeFiles } from '../services/volumes/volume-files.ts';
import type { VolumeTokens } from '../services/volumes/volume-tokens.ts';
import type { VolumeTree } from '../services/volumes/volume-tree.ts';
import type { VolumeService } from '../services/volumes/volumes.ts';
import { serverStream, unary } from './connect.ts';
import { controlPlaneRoutes } from './control-plane.ts';
import { toE2bError } from './errors.ts';
import { forkRoute } from './fork-route.ts';
import { metricsRoutes } from './metrics-routes.ts';
import { snapshotRoutes } from './snapshot-routes.ts';
import type { FileMetadataService } from '../services/data-plane/file-metadata.ts';
import { FilesystemRpc } from './envd/filesystem-rpc.ts';
import { envdHttpRoutes } from './envd/http-routes.ts';
import { ProcessRpc } from './envd/process-rpc.ts';
import { ENVD_PORT, envdTarget } from './envd/target.ts';
import { portProxy } from './port-proxy.ts';
import { volumeContentRoutes } from './volume-content-routes.ts';
import { volumeRoutes } from './volume-routes.ts';
import { type E2bTemplateBuildDeps, templateBuildRoutes } from './template-build-routes.ts';
import { drainOversizedBodies } from '../oversized-body.ts';
import { lazySerializers } from '../lazy-serializers.ts';

export interface E2bDeps {
  /** Requests per key (or client address) per window, as on Sandpit's own port; 0 disables. */
  rateLimit: { max: number; windowMs: number; shared?: SharedRateLimits };
  auth: AuthService;
  sandboxes: SandboxService;
  files: FileService;
  /** User metadata on files (envd 0.6.2's `X-Metadata-*`), kept by the platform. */
  fileMetadata: FileMetadataService;
  sessions: SessionRegistry;
  /** Sampled per-sandbox series, served as E2B's metrics; without it the route is absent (404). */
  sandboxMetrics?: SandboxMetrics;
  /** Sandpit's snapshots, served as E2B's snapshot API (and fork); without it those routes are absent. */
  snapshots?: SnapshotService;
  /** Control-plane calls that change something are recorded as on the main API. */
  audit: AuditLog;
  region: string;
  /** Where the SDK reaches this port as `https://api.<domain>`: the `domain` of volumes; undefined: none is sent. */
  e2bDomain?: string;
  /** Routes traffic for sandbox ports other than envd's (the code interpreter's 49999) and publishes E2B templates' public ports. */
  previews: PreviewPortService;
  connections: PlatformConnections;
  /** Sandpit's volumes, served as E2B's volume API and its volume content API; without them those routes are absent. */
  volumes?: { volumes: VolumeService; volumeFiles: VolumeFiles; volumeTree: VolumeTree; volumeTokens: VolumeTokens };
  /** The working directory a template's sandboxes start commands in (its last workdir step), if it set one. */
  templateWorkdir?: (templateId: string) => Promise<string | undefined>;
  /** Sandpit's template builds, served as E2B's template builder API. */
  templateBuilds?: Omit<E2bTemplateBuildDeps, 'auth'>;
}

/** Requests for a sandbox's envd are served under this prefix; the control plane has the rest. */
const ENVD_PREFIX = '/__envd';
/** A signed file URL (envd's `/files?...&signature=`) names no sandbox when the SDK has one E2B_SANDBOX_URL. */
const SIGNED_FILES = /^\/files\?(.*&)?signature=/;
const isEnvd = (headers: Record<string, string | string[] | undefined>) => envdTarget(headers)?.port === ENVD_PORT;
/** Keep-alive messages: a oneof is a field of the response itself in proto3 JSON, nested in `event` for processes. */
const PROCESS_KEEPALIVE = { event: { keepalive: {} } };
const WATCH_KEEPALIVE = { keepalive: {} };

/**
 * The E2B-compatible API on its own port: the control plane (X-API-KEY) and, for requests that name a
 * sandbox (E2b-Sandbox-Id header or a `{port}-{id}.{domain}` host), envd's HTTP and Connect routes.
 */
export async function buildE2bApp(deps: E2bDeps, log: FastifyBaseLogger): Promise<{ app: FastifyInstance; close(): void }> {
  const app = Fastify({
    loggerInstance: log.child({ api: 'e2b' }),
    schemaController: lazySerializers,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 16 * 1024 * 1024,
    // Command and watch streams can be open for hours: closing the server ends them.
    forceCloseConnections: true,
    rewriteUrl: (req) => (isEnvd(req.headers) || SIGNED_FILES.test(req.url ?? '') ? ENVD_PREFIX + (req.url ?? '/') : (req.url ?? '/')),
  });
  // Uploads and Connect envelopes are read by their routes as streams.
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
  drainOversizedBodies(app);
  app.setErrorHandler((err, req, reply) => {
    const { status, body } = toE2bError(err);
    if (status >= 500) req.log.error({ err: { message: (err as Error).message } }, 'e2b request failed');
    return reply.code(status).send(body);
  });
  app.setNotFoundHandler((req, reply) => reply.code(404).send({ code: 404, message: `no route ${req.method} ${req.url.split('?')[0]}` }));

  if (deps.rateLimit.max > 0) {
    await app.register(fastifyRateLimit, {
      max: deps.rateLimit.max,
      timeWindow: deps.rateLimit.windowMs,
      store: deps.rateLimit.shared?.pluginStore('e2b'),
      keyGenerator: (req) => String(req.headers['x-api-key'] ?? req.headers['x-access-token'] ?? req.ip),
      errorResponseBuilder: (_req, ctx) => ({ statusCode: 429, code: 429, message: `request rate exceeded; retry in ${Math.ceil(ctx.ttl / 1000)} s` }),
    });
  }
  auditE2bCalls(app, deps);
  await portProxy(app, deps);
  await app.register((a) => controlPlaneRoutes(a, { ...deps, volumes: deps.volumes?.volumes }));
  const { templateBuilds } = deps;
  if (templateBuilds) await app.register((a) => templateBuildRoutes(a, { ...templateBuilds, auth: deps.auth }));
  const { sandboxMetrics } = deps;
  if (sandboxMetrics) await app.register((a) => metricsRoutes(a, { ...deps, sandboxMetrics }));
  const { snapshots } = deps;
  if (snapshots) await app.register((a) => snapshotRoutes(a, { ...deps, snapshots, templates: deps.templateBuilds?.templates }));
  if (snapshots) await app.register((a) => forkRoute(a, { ...deps, snapshots }));
  const { volumes } = deps;
  if (volumes) await app.register((a) => volumeRoutes(a, { ...deps, ...volumes }));
  if (volumes) await app.register((a) => volumeContentRoutes(a, { ...deps, ...volumes }));

  const processes = new ProcessRpc(deps.sandboxes, deps.sessions, async (id) => (id === null ? undefined : deps.templateWorkdir?.(id)));
  const filesystem = new FilesystemRpc(deps.sandboxes, deps.files, deps.fileMetadata);
  await app.register(
    async (a) => {
      await envdHttpRoutes(a, deps);
      const rpc = {
        '/process.Process/Start': serverStream(processes.start, PROCESS_KEEPALIVE),
        '/process.Process/Connect': serverStream(processes.connect, PROCESS_KEEPALIVE),
        '/process.Process/List': unary(processes.list),
        '/process.Process/SendInput': unary(processes.sendInput),
        '/process.Process/SendSignal': unary(processes.sendSignal),
        '/process.Process/CloseStdin': unary(processes.closeStdin),
        '/process.Process/Update': unary(processes.update),
        '/filesystem.Filesystem/Stat': unary(filesystem.stat),
        '/filesystem.Filesystem/ListDir': unary(filesystem.listDir),
        '/filesystem.Filesystem/MakeDir': unary(filesystem.makeDir),
        '/filesystem.Filesystem/Move': unary(filesystem.move),
        '/filesystem.Filesystem/Remove': unary(filesystem.remove),
        '/filesystem.Filesystem/WatchDir': serverStream(filesystem.watchDir, WATCH_KEEPALIVE),
        '/filesystem.Filesystem/CreateWatcher': unary(filesystem.createWatcher),
        '/filesystem.Filesystem/GetWatcherEvents': unary(filesystem.getWatcherEvents),
        '/filesystem.Filesystem/RemoveWatcher': unary(filesystem.removeWatcher),
      };
      for (const [path, handler] of Object.entries(rpc)) a.post(path, handler);
    },
    { prefix: ENVD_PREFIX },
  );
  return { app, close: () => filesystem.close() };
}

/** The audit entry of each control-plane call that changes something, once its answer is sent (the caller waits for nothing). */
function auditE2bCalls(app: FastifyInstance, deps: E2bDeps): void {
  const created = new WeakMap<FastifyRequest, string>();
  app.addHook('onSend', async (req, reply, payload) => {
    const action = E2B_ACTIONS[`${req.method} ${req.routeOptions.url}`];
    if (reply.statusCode < 300 && typeof payload === 'string' && (action === 'sandbox.create' || action === 'volume.create')) {
      try {
        const body = JSON.parse(payload) as { sandboxID?: unknown; volumeID?: unknown };
        const id = action === 'volume.create' ? body.volumeID : body.sandboxID;
        if (typeof id === 'string') created.set(req, id);
      } catch {
        // Not JSON: no id to record.
      }
    }
    return payload;
  });
  app.addHook('onResponse', async (req, reply) => {
    const action = e2bActionOf(req, `${req.method} ${req.routeOptions.url}`);
    const p = req.principal;
    if (!action || !p) return;
    const params = req.params as { sandboxID?: string; volumeID?: string; templateID?: string } | undefined;
    const kind = action.split('.')[0]!;
    // Volumes and templates by their own id or name (a snapshot deleted as a template by its id); the rest by the sandbox's.
    const resourceType = kind === 'volume' || kind === 'template' || action === 'snapshot.delete' ? kind : 'sandbox';
    const named =
      resourceType === 'volume'
        ? params?.volumeID
        : resourceType === 'sandbox'
          ? params?.sandboxID
          : (params?.templateID ?? templateNamed(req.body as { target?: unknown; name?: unknown } | undefined));
    const raw = created.get(req) ?? named;
    const id = raw === undefined || resourceType !== 'sandbox' ? undefined : parseSandboxIdLoose(raw);
    const ua = req.headers['user-agent'];
    deps.audit.record({
      teamId: p.teamId,
      actorType: 'api_key',
      keyId: p.keyId,
      userId: p.userId,
      action,
      resourceType,
      resourceId: id ? taggedSandboxId(id.region ?? deps.region, id.id) : (raw?.slice(0, 256) ?? null),
      method: req.method,
      route: `e2b ${req.routeOptions.url ?? ''}`,
      status: reply.statusCode,
      ip: req.ip,
      userAgent: typeof ua === 'string' ? ua.slice(0, 512) : null,
      traceId: null,
    });
  });
}

/** The template a tags call names (`target` name:tag, or `name`), without its tag. */
function templateNamed(body: { target?: unknown; name?: unknown } | undefined): string | undefined {
  const ref = typeof body?.target === 'string' ? body.target : typeof body?.name === 'string' ? body.name : undefined;
  return ref?.split(':')[0];
}
