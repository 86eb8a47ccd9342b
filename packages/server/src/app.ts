import type { Duplex } from 'node:stream';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as HttpsServerOptions } from 'node:https';
import fastifyRateLimit from '@fastify/rate-limit';
import fastifySwagger from '@fastify/swagger';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import { allowBrowsers } from './routes/cors.ts';
import { ApiError, tooMany } from './errors.ts';
import { clientErrorHandler, codeForStatus, envelope, frameworkErrors } from './routes/error-envelope.ts';
import { drainOversizedBodies } from './oversized-body.ts';
import { acceptMissingOptionalBody } from './routes/optional-body.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { auditLogRoutes, auditTrail } from './routes/audit-log.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { billingRoutes } from './routes/billing.ts';
import { consoleAssetRoutes } from './routes/console-assets.ts';
import { consoleSessionRoutes } from './routes/console-session.ts';
import type { Services } from './routes/context.ts';
import { controlExecRoutes, dataPlaneExecRoutes } from './routes/exec.ts';
import { codeRoutes } from './routes/code.ts';
import { fileRoutes, fileSchemas } from './routes/files.ts';
import { HEALTH_PATHS, healthRoutes } from './routes/health.ts';
import { infoRoutes, VERSION } from './routes/info.ts';
import { previewGateway } from './routes/preview-gateway.ts';
import { previewPortRoutes } from './routes/preview-ports.ts';
import { desktopRoutes } from './routes/desktop.ts';
import { processRoutes, processSchemas } from './routes/processes.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { sandboxObservabilityRoutes } from './routes/sandbox-observability.ts';
import { sandboxChangeRoutes } from './routes/sandbox-changes.ts';
import { sessionCookieOf } from './routes/session-cookie.ts';
import { sandboxRoutes } from './routes/sandboxes.ts';
import { secretRoutes } from './routes/secrets.ts';
import { sshKeyRoutes } from './routes/ssh-keys.ts';
import { snapshotRoutes } from './routes/snapshots.ts';
import { volumeRoutes } from './routes/volumes.ts';
import { volumeFileRoutes } from './routes/volume-files.ts';
import { Volume, VolumeFileEntry } from './schemas/volume.ts';
import { teamRoutes } from './routes/teams.ts';
import { templateRoutes } from './routes/templates.ts';
import { terminalRoutes, terminalSchemas } from './routes/terminals.ts';
import { ErrorEnvelope } from './schemas/common.ts';
import { Sandbox, SandboxWithToken } from './schemas/sandbox.ts';
import { Snapshot } from './schemas/snapshot.ts';
import { Change } from './schemas/changes.ts';
import { Template } from './schemas/template.ts';
import { storeUnavailable } from './store/availability.ts';
import { diskGuard } from './routes/disk-guard.ts';
import { DiskSpace, diskFull } from './services/disk-space.ts';
import { type ForwarderDeps, forwardToNodes } from './cluster/forwarder.ts';
import { guardNode } from './cluster/node-guard.ts';
import { nodeEngineRoutes } from './cluster/node-routes.ts';
import { nodeVolumeRoutes } from './cluster/volume-usage-routes.ts';
import { snapshotFileRoutes } from './cluster/snapshot-file-routes.ts';
import type { NodeDrain } from './cluster/drain.ts';
import { sandboxMoveRoutes } from './cluster/sandbox-move-routes.ts';
import { nodeSshRoute } from './cluster/node-ssh.ts';
import { sandboxLayerRoutes } from './cluster/sandbox-layer-routes.ts';
import type { SandboxMover } from './cluster/sandbox-mover.ts';
import { internalNodeRoutes } from './routes/internal-nodes.ts';
import type { NodeService } from './services/fleet/nodes.ts';
import type { RuntimeDriver } from './runtime/driver.ts';
import type { SandboxStore } from './store/sandboxes.ts';
import type { RequestHandler, Telemetry } from './telemetry.ts';
import type { InternalChannel } from './cluster/internal-channel.ts';
import { trace } from '@opentelemetry/api';
import { lazySerializers } from './lazy-serializers.ts';

/** The role's own edge (several hosts): an API replica forwards to nodes; a node serves only its replicas. */
export type RoleEdge =
  | { role: 'api'; key: Buffer; channel: InternalChannel; nodes: NodeService; drain: NodeDrain; forward: ForwarderDeps }
  | {
      role: 'node';
      key: Buffer;
      channel: InternalChannel;
      nodeId: string;
      driver: RuntimeDriver;
      store: SandboxStore;
      mover: SandboxMover;
      /** Where transfers to and from other nodes place their FIFOs (transferScratch). */
      transfers: string;
      /** Serves one SSH connection an API replica relays. */
      ssh: (stream: Duplex, remoteAddress: string) => void;
    };

/** The HTTP server of a handler: HTTPS with these options, traced when telemetry is on. */
export function serve(handler: RequestHandler, tls: HttpsServerOptions | undefined, telemetry?: Pick<Telemetry, 'traced'>): HttpServer {
  const h = telemetry ? telemetry.traced(handler) : handler;
  return tls ? createHttpsServer(tls, h) : createHttpServer(h);
}

/** Builds the HTTP server: control plane and data plane on one listener. */
export async function buildApp(s: Services, log: FastifyBaseLogger, edge?: RoleEdge, telemetry?: Pick<Telemetry, 'traced'>): Promise<FastifyInstance> {
  // A node with internal TLS serves HTTPS only (its callers are members); tracing on, every request runs in its server span's context.
  const tls = edge?.role === 'node' ? edge.channel.serverOptions() : undefined;
  const app = Fastify({
    ...(tls || telemetry ? { serverFactory: (handler: RequestHandler) => serve(handler, tls, telemetry) } : {}),
    loggerInstance: log,
    schemaController: lazySerializers,
    // Per-request lines would cost more than the requests at thousands per second; errors still log.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 2 * 1024 * 1024,
    // Names and values are validated exactly as sent: no coercion, no silent stripping.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
    routerOptions: { ignoreTrailingSlash: true },
    // What the router and Node's HTTP parser reject answers in the envelope too.
    frameworkErrors,
    clientErrorHandler,
  });
  app.addHook('onRoute', acceptMissingOptionalBody);
  drainOversizedBodies(app);
  if (telemetry) {
    // The span is named for the route; the trace id goes into the audit entry and answers every error (X-Trace-Id).
    // Callback hooks, not async ones: no promise per request.
    app.addHook('onRequest', (req, _reply, done) => {
      // Fastify runs this hook synchronously inside the server span's context (telemetry.traced).
      const span = trace.getActiveSpan();
      const route = req.routeOptions.url;
      if (span) {
        req.traceId = span.spanContext().traceId;
        if (route && span.isRecording()) {
          span.updateName(`${req.method} ${route}`);
          span.setAttribute('http.route', route);
        }
      }
      done();
    });
    app.addHook('onSend', (req, reply, payload, done) => {
      if (reply.statusCode >= 400 && req.traceId) reply.header('x-trace-id', req.traceId);
      done(null, payload);
    });
  }

  // Bodiless POSTs (pause, resume) often still carry a JSON content type.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new ApiError(400, 'bad_request', 'request body is not valid JSON'), undefined);
    }
  });

  app.setErrorHandler((err: FastifyError | ApiError, req, reply) => {
    if (err instanceof ApiError) {
      return reply
        .code(err.status)
        .headers(err.headers)
        .send({ error: { code: err.code, message: err.message } });
    }
    if (err.validation) {
      const where = err.validationContext ?? 'request';
      return reply.code(400).send({ error: { code: 'bad_request', message: `${where}${err.message.replace(/^(body|params|querystring|headers)/, '')}` } });
    }
    if (diskFull(err)) {
      req.log.error({ err: { message: err.message } }, 'the data disk is full');
      return reply.code(507).send(envelope('insufficient_storage', "the platform's data disk is full; nothing was changed, retry once space is freed"));
    }
    if (storeUnavailable(err)) {
      req.log.warn({ err: { message: err.message } }, 'store unavailable');
      return reply
        .code(503)
        .header('retry-after', '1')
        .send({ error: { code: 'unavailable', message: 'the store is not reachable; retry shortly' } });
    }
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.code(status).send(envelope(codeForStatus(status), err.message));
    req.log.error({ err: { message: err.message, code: err.code } }, 'request failed');
    return reply.code(500).send({ error: { code: 'internal', message: 'internal error' } });
  });

  app.addHook('preHandler', diskGuard(new DiskSpace(s.config.dataDir, s.config.diskReserveMib)));

  if (edge?.role === 'node') {
    edge.channel.attach(app.server);
    guardNode(app, edge, HEALTH_PATHS);
  }
  // Preview hosts are routed before everything else, the rate limit included; on an API replica every
  // sandbox's traffic, previews included, goes on to its node.
  if (edge?.role === 'api') await forwardToNodes(app, edge.forward);
  else await previewGateway(app, s);
  await allowBrowsers(app, s.config.corsOrigins);

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ error: { code: 'not_found', message: `no route ${req.method} ${req.url.split('?')[0]}` } });
  });

  if (s.config.rateLimitMax > 0) {
    await app.register(fastifyRateLimit, {
      max: s.config.rateLimitMax,
      timeWindow: s.config.rateLimitWindowMs,
      store: s.rateLimits?.pluginStore('api'),
      keyGenerator: (req) => String(req.headers['x-api-key'] ?? req.headers['x-access-token'] ?? sessionCookieOf(req.headers.cookie) ?? req.ip),
      errorResponseBuilder: (_req, ctx) => tooMany('rate_limited', `request rate exceeded; retry in ${Math.ceil(ctx.ttl / 1000)} s`, Math.ceil(ctx.ttl / 1000)),
    });
  }

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Sandpit API', version: VERSION, description: 'Sandboxes for AI agents. Errors use {"error": {"code", "message"}}.' },
      components: {
        securitySchemes: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          AccessToken: { type: 'apiKey', in: 'header', name: 'X-Access-Token' },
        },
      },
      security: [],
    },
    refResolver: { buildLocalReference: (json, _base, _frag, i) => String(json.$id ?? `def-${i}`) },
  });
  app.addSchema(ErrorEnvelope);
  app.addSchema(Sandbox);
  app.addSchema(SandboxWithToken);
  app.addSchema(Snapshot);
  app.addSchema(Change);
  app.addSchema(Template);
  app.addSchema(Volume);
  app.addSchema(VolumeFileEntry);
  for (const schema of [...fileSchemas, ...processSchemas, ...terminalSchemas]) app.addSchema(schema);
  // Terminals: 1 MiB frames are plenty for keystrokes and pastes.
  await app.register(fastifyWebsocket, { options: { maxPayload: 1024 * 1024 } });
  // Control-plane routes declare the API key scheme unless they say otherwise.
  app.addHook('onRoute', (route) => {
    if (route.schema && route.schema.security === undefined) route.schema.security = [{ ApiKey: [] }];
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await metricsRoutes(app, s);
  // Before every route: its onRoute hook sees the WebSocket routes as they are added.
  auditTrail(app, s);
  // First: its cookie parser must run before every route's API key hook.
  await consoleSessionRoutes(app, s);
  await consoleAssetRoutes(app, s.config.consoleDir);
  await infoRoutes(app, s);
  await healthRoutes(app, s);
  await apiKeyRoutes(app, s);
  await sandboxRoutes(app, s);
  await sandboxObservabilityRoutes(app, s);
  await sandboxChangeRoutes(app, s);
  await snapshotRoutes(app, s);
  await controlExecRoutes(app, s);
  await codeRoutes(app, s);
  await dataPlaneExecRoutes(app, s);
  await fileRoutes(app, s);
  await processRoutes(app, s);
  await terminalRoutes(app, s);
  await secretRoutes(app, s);
  await sshKeyRoutes(app, s);
  await previewPortRoutes(app, s);
  await desktopRoutes(app, s);
  await templateRoutes(app, s);
  await teamRoutes(app, s);
  await billingRoutes(app, s);
  await volumeRoutes(app, s);
  await volumeFileRoutes(app, s);
  await auditLogRoutes(app, s);
  await webhookRoutes(app, s);
  if (edge?.role === 'api') await internalNodeRoutes(app, edge);
  if (edge?.role === 'node') {
    await nodeEngineRoutes(app, edge.driver, edge.store);
    await nodeVolumeRoutes(app, s.volumes);
    await snapshotFileRoutes(app, edge.driver, edge.transfers);
    await sandboxMoveRoutes(app, edge.driver, edge.mover, edge.transfers);
    await sandboxLayerRoutes(app, edge.driver, edge.transfers);
    await nodeSshRoute(app, edge.ssh);
  }
  return app;
}
