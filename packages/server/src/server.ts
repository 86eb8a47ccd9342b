import type { Server } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { buildApp, serve } from './app.ts';
import { HostCa } from './network/ca.ts';
import { acceptTlsToo } from './tls-on-same-port.ts';
import { type Clock, systemClock } from './clock.ts';
import type { Config } from './config.ts';
import { buildE2bApp } from './e2b/app.ts';
import { SshGateway } from './ssh/gateway.ts';
import { nodeSshStreams } from './cluster/node-ssh.ts';
import { clusterHostKey, loadHostKey } from './services/ssh/host-key.ts';
import { LoginThrottle } from './services/ssh/login-throttle.ts';
import { SshAccess } from './services/ssh/ssh-access.ts';
import { SshKeyService } from './services/ssh/ssh-keys.ts';
import { SshKeyStore } from './store/ssh-keys.ts';
import { newId } from './ids.ts';
import { createLogger } from './logger.ts';
import { startTelemetry, type Telemetry } from './telemetry.ts';
import type { RuntimeDriver } from './runtime/driver.ts';
import { createDriver } from './runtime/select.ts';
import { AgentPool } from './runtime/agent-pool.ts';
import { AuthService } from './services/access/auth.ts';
import { AuditLog } from './services/audit/audit-log.ts';
import { AuditLogStore } from './store/audit-log.ts';
import { WebhookStore } from './store/webhooks.ts';
import { WebhookService } from './services/webhooks/webhooks.ts';
import { WebhookDispatcher } from './services/webhooks/dispatcher.ts';
import { UrlGuard } from './services/webhooks/url-guard.ts';
import { sandboxView } from './services/sandboxes/sandbox-view.ts';
import { ConsoleSessions } from './services/access/console-sessions.ts';
import { BillingService } from './services/billing/billing-service.ts';
import { ExecService } from './services/data-plane/exec.ts';
import { CodeInterpreterService } from './services/code/code-interpreter.ts';
import { FileService } from './services/data-plane/files.ts';
import { SandboxChanges } from './services/data-plane/changes.ts';
import { ProcessService } from './services/data-plane/processes.ts';
import { SharedRateLimits } from './services/access/rate-limits.ts';
import { SessionRegistry } from './services/data-plane/sessions.ts';
import { TerminalService } from './services/data-plane/terminals.ts';
import type { SandboxNetworkHooks } from './network/hooks.ts';
import { networkConfig } from './network/network-config.ts';
import { NetworkService } from './services/networking/network.ts';
import { PreviewPortService } from './services/networking/preview-ports.ts';
import { DesktopService } from './services/desktop/desktop.ts';
import { GateService } from './services/access/gates.ts';
import { MeteringService } from './services/billing/metering.ts';
import { instrumentDriver, PlatformMetrics } from './services/metering-metrics.ts';
import { reconcile } from './services/sandboxes/reconcile.ts';
import { EngineWatch } from './services/sandboxes/engine-watch.ts';
import { SandboxEvents } from './services/sandboxes/sandbox-events.ts';
import { SandboxMetrics } from './services/sandboxes/sandbox-metrics.ts';
import { SandboxService } from './services/sandboxes/sandboxes.ts';
import { SnapshotService } from './services/snapshots/snapshots.ts';
import { VolumeService } from './services/volumes/volumes.ts';
import { VolumeTokens } from './services/volumes/volume-tokens.ts';
import { VolumeTree } from './services/volumes/volume-tree.ts';
import { VolumeFiles } from './services/volumes/volume-files.ts';
import { VolumeDisks, volumeDiskPaths } from './runtime/host/volume-disks.ts';
import { type VolumeRecord, VolumeStore } from './store/volumes.ts';
import { VolumeHomes } from './cluster/volume-homes.ts';
import { teamOfHeaders } from './routes/context.ts';
import { TemplateCaptures } from './services/templates/template-captures.ts';
import { CuratedCaptures } from './services/templates/curated-captures.ts';
import { loadSecretsKey, SecretsService } from './services/networking/secrets.ts';
import { TeamManagementService } from './services/access/team-management.ts';
import { CuratedTemplates } from './services/templates/curated-templates.ts';
import { TemplateCatalog } from './services/templates/template-catalog.ts';
import { BuildRequests } from './services/templates/build-requests.ts';
import { TemplateTags } from './services/templates/template-tags.ts';
import { TemplateUploads } from './services/templates/template-uploads.ts';
import { BuildArchives } from './templates/build-archives.ts';
import { TeamTemplates } from './services/templates/team-templates.ts';
import type { ImageTemplateDeps } from './services/templates/image-templates.ts';
import { ImageStore } from './templates/images/image-store.ts';
import { LayerCache } from './templates/layer-cache.ts';
import { SnapshotForks } from './services/snapshots/snapshot-forks.ts';
import { TemplateCopies } from './services/templates/template-copies.ts';
import type { TemplateInfo } from './services/templates/template-info.ts';
import type { BuildProgress } from './templates/build-base.ts';
import { WarmPool } from './services/sandboxes/warm-pool.ts';
import { BillingStore, MeterStore } from './store/billing.ts';
import { ActiveSlotStore } from './store/active-slots.ts';
import { LeaseStore } from './store/leases.ts';
import { Lease } from './services/fleet/lease.ts';
import { ConsoleSessionStore } from './store/console-sessions.ts';
import { type Db, openDb } from './store/db.ts';
import { pingStore } from './store/ping.ts';
import { Readiness } from './services/fleet/readiness.ts';
import { PreviewPortStore } from './store/preview-ports.ts';
import { RateLimitStore } from './store/rate-limits.ts';
import { dialectOf } from './store/dialect.ts';
import { SandboxStore } from './store/sandboxes.ts';
import { SnapshotReservationStore } from './store/snapshot-reservations.ts';
import { SnapshotStore } from './store/snapshots.ts';
import { SecretStore } from './store/secrets.ts';
import { TeamManagementStore } from './store/team-management.ts';
import { TeamStore } from './store/teams.ts';
import { TemplateStore } from './store/templates.ts';
import { BuildRequestStore } from './store/template-build-requests.ts';
import { NodeStore } from './store/nodes.ts';
import { NodeService } from './services/fleet/nodes.ts';
import { Placement } from './services/fleet/placement.ts';
import { PlatformConnections } from './services/sandboxes/platform-connections.ts';
import { RegionService } from './services/fleet/regions.ts';
import { RegionStore } from './store/regions.ts';
import { TokenCache } from './internal-token.ts';
import { NodeDirectory } from './cluster/node-client.ts';
import { InternalChannel } from './cluster/internal-channel.ts';
import { ApiRoleDriver } from './cluster/api-role-driver.ts';
import { NodeAgent } from './cluster/node-agent.ts';
import { SnapshotShipping } from './cluster/snapshot-shipping.ts';
import { NodeDrain } from './cluster/drain.ts';
import { NodePeers } from './cluster/node-peer.ts';
import { transferScratch } from './runtime/tree-transfer.ts';
import { PeerLayers } from './cluster/remote-layers.ts';
import { SandboxMover } from './cluster/sandbox-mover.ts';
import { LiveMoveSteps } from './services/sandboxes/live-move.ts';
import { SandboxMigrations } from './services/sandboxes/sandbox-migrations.ts';
import { FileMetadataService } from './services/data-plane/file-metadata.ts';
import { FileMetadataStore } from './store/file-metadata.ts';
import { SandboxRelocation } from './cluster/sandbox-relocation.ts';
import { snapshotTemplateFiles } from './services/templates/snapshot-template-files.ts';
import { UnusedFiles } from './services/templates/unused-files.ts';
import type { RoleEdge } from './app.ts';

export interface Platform {
  app: FastifyInstance;
  db: Db;
  driver: RuntimeDriver;
  sandboxes: SandboxService;
  auth: AuthService;
  /** platform/* templates; `templates.base()` settles when platform/base is built. */
  templates: CuratedTemplates;
  billing: BillingService;
  /** The first team's key when this start created it (printed once by `serve`). */
  createdKey?: string;
  /** Set when OpenTelemetry is configured. */
  telemetry?: Telemetry;
  url: string;
  /** An API replica's internal TLS listener, when it has one. */
  internalUrl?: string;
  /** The SSH gateway, when this process runs one: its port and the installation's host key. */
  ssh?: { port: number; fingerprint: string; publicKey: string };
  close(): Promise<void>;
  /** The step `close()` is waiting on, while it runs: what a shutdown that overran its deadline names. */
  readonly closingStep: string | undefined;
}

export interface StartOptions {
  clock?: Clock;
  onProgress?: (p: BuildProgress) => void;
  /** Create the first team with a generated key when the store has none and no bootstrap key is set. */
  createFirstTeam?: boolean;
  timerIntervalMs?: number;
  /**
   * Unit tests of the layers above the engine: this driver instead of the configured one, and no
   * sandbox network (a fake engine has no namespace to join).
   */
  engine?: RuntimeDriver;
  /** Where log lines go (tests read them); default stdout. */
  logDestination?: DestinationStream;
  /** Webhook attempts with no answer by then are retried (default 10 s). */
  webhookTimeoutMs?: number;
}

const NO_REVOCATIONS: ReadonlySet<string> = new Set();

export const FIRST_KEY_FILE = 'first-api-key';
const TIMER_INTERVAL_MS = 250;
/** Billing job: meters new lifecycle events and rolls periods over; disks are sampled every DISK_SAMPLE_MS of clock time. */
const BILLING_INTERVAL_MS = 1000;
const DISK_SAMPLE_MS = 60_000;
/** How often a replica on a shared store asks it for secrets revoked elsewhere (bounds when its egress proxy stops swapping them). */
const SECRET_REVOCATION_SYNC_MS = 500;
/** How often a process reads the store's auth epoch: below PRINCIPAL_STALE_AFTER_MS, so cached principals stay in use while the store answers. */
const AUTH_SYNC_MS = 200;
/** Timers and the billing job run on the replica holding their lease; a dead holder's lease lapses after this. */
const JOB_LEASE_TTL_MS = 10_000;
/** Webhook attempts: how long one waits for an answer; how often the outbox is looked at unprompted. */
const WEBHOOK_TIMEOUT_MS = 10_000;
const WEBHOOK_INTERVAL_MS = 250;
/** How often audit entries past retention are pruned (by one replica). */
const AUDIT_PRUNE_MS = 3_600_000;
/** How often unused build-context uploads are looked for. */
const UPLOAD_COLLECT_MS = 3_600_000;
/** How often an API replica looks for nodes that fell silent. */
const NODE_SWEEP_MS = 1000;

/** Opens the store, reconciles the engine, and serves the API; `close` stops serving but leaves sandboxes running. */
export async function startPlatform(config: Config, opts: StartOptions = {}): Promise<Platform> {
  const clock = opts.clock ?? systemClock;
  // OpenTelemetry is off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; on, log lines within a request carry its trace id.
  const log = createLogger(config.logLevel, config.otel.endpoint !== undefined, opts.logDestination);
  const db = await openDb(config);
  const { role } = config.cluster;
  // A node records what it makes as its own and works only from its own rows; otherwise every row is this process's.
  const nodeId = config.cluster.nodeId ?? null;
  const tokens = config.cluster.key && new TokenCache(config.cluster.key);
  // What a start that fails partway (a port in use) has opened, closed in reverse so the process can exit.
  const opened: (() => Promise<unknown>)[] = [];
  try {
    const channel = config.cluster.tls && role !== 'all' ? await InternalChannel.tls(config.cluster.tls, log) : InternalChannel.plain();
    opened.push(async () => channel.close());
    if (role !== 'all' && !channel.secure) log.warn('the internal channel is not encrypted: set SANDPIT_TLS_CA, SANDPIT_TLS_CERT and SANDPIT_TLS_KEY for mutual TLS (docs/cluster.md)');
    const teams = new TeamStore(db);
    // Each lifecycle event keeps the sandbox as the API shows it (webhooks send it); revoked secrets are marked when its deliveries are queued.
    const store = new SandboxStore(db, nodeId, (s) => sandboxView(s, NO_REVOCATIONS));
    const nodeStore = new NodeStore(db);
    const directory = role === 'api' ? new NodeDirectory(nodeStore, tokens!, config.cluster.lostMs, channel) : undefined;
    const consoleSessionStore = new ConsoleSessionStore(db);
    const auth = new AuthService(teams, clock, consoleSessionStore);

    let createdKey: string | undefined;
    if ((await teams.countTeams()) === 0) {
      if (config.bootstrapApiKey) await auth.createTeam('default', { key: config.bootstrapApiKey });
      else if (opts.createFirstTeam) {
        createdKey = (await auth.createTeam('default')).key;
        await writeFile(join(config.dataDir, FIRST_KEY_FILE), `${createdKey}\n`, { mode: 0o600 });
      }
    }

    const teamManagementStore = new TeamManagementStore(db);
    await teamManagementStore.grantMissingOwners(newId, clock.now());
    await auth.syncChanges();
    const meterStore = new MeterStore(db);
    const metrics = new PlatformMetrics(meterStore);
    const telemetry = startTelemetry(config.otel, metrics.registry);
    if (telemetry) opened.push(() => telemetry.shutdown());
    const engine = directory ? new ApiRoleDriver(config.driver === 'container' ? 'container' : 'gvisor', directory) : (opts.engine ?? (await createDriver(config, log)));
    const driver = instrumentDriver(engine, metrics);
    opened.push(() => driver.close());
    const agents = new AgentPool(driver);
    await reconcile(store, driver, clock, log);

    const secretsKey = await loadSecretsKey(join(config.dataDir, 'secrets.key'), config.secretsKey);
    const secrets = new SecretsService(new SecretStore(db), secretsKey, clock);
    await secrets.load();
    // After the engine is reconciled: slots of failed or deleted sandboxes are released here.
    const network = opts.engine || role === 'api' ? undefined : await NetworkService.start(await networkConfig(config.network, config.dataDir), secrets, await store.listLive(), log);
    if (network) opened.push(() => network.close());
    const previewStore = new PreviewPortStore(db);
    const sandboxNetwork: SandboxNetworkHooks | undefined = network && {
      prepare: (input) => network.prepare(input),
      update: (id, rules) => network.update(id, rules),
      release: async (id) => {
        await network.release(id);
        await previewStore.deleteAll(id);
      },
    };

    const templateStore = new TemplateStore(db, nodeId);
    const archives = new BuildArchives(join(config.dataDir, 'templates', 'uploads'));
    const uploads = new TemplateUploads(secretsKey, archives, config.templates.maxTemplateBytes);
    const build = { driver, agents, network: sandboxNetwork, log, maxTemplateBytes: config.templates.maxTemplateBytes, archives };
    const curated = new CuratedTemplates({ imageDir: config.imageDir, clock, log, build, debianMirror: config.templates.debianMirror, onProgress: opts.onProgress });
    await curated.init();
    const layerCache = new LayerCache(join(config.dataDir, 'templates', 'layers'));
    const images: ImageTemplateDeps = {
      images: new ImageStore(join(config.dataDir, 'templates', 'images')),
      layers: layerCache,
      insecureRegistries: config.templates.insecureRegistries,
      ...(config.templates.dockerHubMirror ? { dockerHubMirror: config.templates.dockerHubMirror } : {}),
      maxBytes: config.templates.imageMaxBytes,
      secretValue: (teamId, name) => secrets.valueOf(teamId, name),
    };
    // A node rebuilds, from its recipe, a team template another node built; `catalog` is read when a copy is made.
    const copies: TemplateCopies | undefined =
      role === 'node'
        ? new TemplateCopies({
            ownDirs: [config.dataDir, config.imageDir],
            dataDir: config.dataDir,
            build,
            images,
            cache: layerCache,
            resolveBase: (teamId: string, ref: string): Promise<TemplateInfo> => catalog.resolve(teamId, ref),
            log,
          })
        : undefined;
    const catalog: TemplateCatalog = new TemplateCatalog(templateStore, curated, copies);
    const captures = new TemplateCaptures({
      driver,
      agents,
      templates: catalog,
      store: templateStore,
      network: sandboxNetwork,
      log,
      enabled: config.templates.capture,
      curated: await CuratedCaptures.load(join(config.dataDir, 'templates', 'curated-captures.json')),
    });
    const templates = new TeamTemplates({ dataDir: config.dataDir, store: templateStore, teams, clock, log, limits: config.templates, catalog, build, images, captures, cache: layerCache });
    // Builds run on nodes, which end their own interrupted ones.
    if (role !== 'api') await templates.init();
    if (role !== 'api') {
      const unusedFiles = new UnusedFiles({
        store: templateStore,
        layers: layerCache,
        images: images.images,
        enginePaths: driver.templatePaths?.bind(driver),
        building: () => templates.building,
        clock,
        log,
        graceMs: config.templates.unusedGraceMs,
      });
      unusedFiles.start();
      opened.push(() => unusedFiles.stop());
    }
    const warmPool = new WarmPool({ driver, agents, templates: catalog, network: sandboxNetwork, log, config: config.warmPool });

    const snapshotStore = new SnapshotStore(db, nodeId);
    const connections = new PlatformConnections();
    if (network) connections.register((id) => network.cutConnections(id));
    const templateFiles = { store: templateStore, curated, copies: copies!, ownDirs: [config.dataDir, config.imageDir] };
    const transfers = role === 'node' ? await transferScratch(config.dataDir) : undefined;
    const peers = role === 'node' ? new NodePeers(nodeStore, tokens!, config.cluster.lostMs, channel, transfers!) : undefined;
    // A node fetches from its holder a snapshot placement asks it to fork.
    const shipping =
      role === 'node' && driver.snapshots
        ? new SnapshotShipping({
            engine: driver.snapshots,
            peers: peers!,
            relocate: (templateId, t) => snapshotTemplateFiles(templateFiles, templateId, t),
            snapshot: (id) => snapshotStore.get(id),
            counted: (id, bytes) => snapshotStore.addCopyBytes(id, bytes),
            nodeId: nodeId!,
            log,
          })
        : undefined;
    // Volumes live on the host that runs sandboxes (a node, or the single process); not on an API replica.
    const volumeDisks = role === 'api' || opts.engine ? undefined : new VolumeDisks({ ...volumeDiskPaths(config.dataDir), sizeGiB: config.volumeStoreGiB, logger: log });
    await volumeDisks?.init();
    if (volumeDisks) opened.push(() => volumeDisks.close());
    const volumeStore = new VolumeStore(db);
    const volumeHomes = directory && new VolumeHomes({ store: volumeStore, directory, teamOf: (headers) => teamOfHeaders(auth, headers) });
    const volumes = new VolumeService({
      store: volumeStore,
      disks: volumeDisks,
      clock,
      nodeId,
      maxPerTeam: config.maxVolumesPerTeam,
      ...(volumeHomes ? { remoteUsage: (rec: VolumeRecord) => volumeHomes.usage(rec) } : {}),
    });
    await volumes.reconcile();
    const volumeFiles = new VolumeFiles(volumes);
    const sandboxes = new SandboxService({
      volumes,
      store,
      teams,
      driver,
      templates: catalog,
      agents,
      clock,
      log,
      region: config.region,
      maxActivePerTeam: config.maxActiveSandboxesPerTeam,
      maxConcurrentStarts: config.maxConcurrentStarts,
      slots: new ActiveSlotStore(db),
      network: sandboxNetwork,
      connections,
      forks: new SnapshotForks(snapshotStore, driver, shipping && ((snap) => shipping.ensure(snap))),
      warmPool,
      captures,
    });
    const exec = new ExecService(sandboxes, catalog, clock);
    const files = new FileService(sandboxes, agents, clock);
    const sessions = new SessionRegistry(sandboxes, clock);
    const processes = new ProcessService(sessions);
    const terminals = new TerminalService(sessions);
    const snapshots = new SnapshotService({
      store: snapshotStore,
      reservations: new SnapshotReservationStore(db),
      sandboxStore: store,
      sandboxes,
      teams,
      driver,
      clock,
      log,
      maxPerTeam: config.maxSnapshotsPerTeam,
      maxInFlightPerTeam: config.maxSnapshotsInFlightPerTeam,
      deadlineMs: config.snapshotDeadlineMs,
      // A node also keeps its copies of snapshots other nodes hold, while they live.
      heldElsewhere: async () => new Set([...(await templateStore.withCapture()).map((r) => r.capture.id), ...(nodeId ? await new SnapshotStore(db).liveIds() : [])]),
    });
    if (role !== 'api') await snapshots.reconcile();
    await shipping?.start();
    if (shipping) opened.push(() => shipping.stop());
    const previews = new PreviewPortService({
      store: previewStore,
      sandboxStore: store,
      sandboxes,
      addressOf: (id) => network?.sandboxAddress(id),
      key: secretsKey,
      now: () => clock.now(),
      // Asked only while serving, so the port is the one bound.
      urlFor: (p, id) => {
        const base = new URL(publicUrl());
        return `${base.protocol}//${p}-${id}.preview.${base.host}`;
      },
    });
    const sshKeys = new SshKeyService(new SshKeyStore(db), () => clock.now());
    const sshAccess = new SshAccess({ store, sandboxes, keys: sshKeys, throttle: new LoginThrottle(() => clock.now()), addressOf: (id) => network?.sandboxAddress(id) });
    connections.register((id) => sshAccess.closeTunnels(id));
    let sshPort = 0;
    // One host key per cluster (from its key): the same whichever replica a client reaches, and the one replicas expect of nodes.
    const sshHostKey = role === 'all' ? (config.sshPort > 0 ? await loadHostKey(config.dataDir) : undefined) : role === 'node' || config.sshPort > 0 ? clusterHostKey(config.cluster.key!) : undefined;
    // An API replica relays each login to the node holding the sandbox; a node serves those relays only (no port of its own).
    const ssh = sshHostKey
      ? new SshGateway({
          access: sshAccess,
          files,
          hostKey: sshHostKey.private,
          log,
          ...(role === 'api' ? { relay: { open: nodeSshStreams(directory!, config.region), hostKey: sshHostKey.publicBlob } } : {}),
        })
      : undefined;
    // Pool sandboxes need platform/base; captures wait for nothing (sandboxes boot until they are ready).
    if (role !== 'api') {
      opened.push(() => warmPool.close());
      void curated.base().then(
        () => warmPool.start(),
        () => undefined,
      );
      void captures.start().catch((err) => log.warn({ err: String(err) }, 'template captures: start failed; sandboxes boot'));
    }

    const teamManagement = new TeamManagementService(teamManagementStore, clock, () => auth.changed());
    const metering = new MeteringService({ store: meterStore, driver, clock, log, sampleIntervalMs: DISK_SAMPLE_MS });
    const billing = new BillingService({
      store: new BillingStore(db),
      metering,
      gates: new GateService(teamManagementStore, clock),
      teams: teamManagement,
      clock,
    });
    // Timers and the billing job fire once across API replicas: only the lease holder runs them.
    const replicaId = newId();
    const leases = new LeaseStore(db);
    // A node's timers act on its own sandboxes only; the billing job and the node watch run on API replicas.
    const timerLease = new Lease(leases, nodeId ? `timers:${nodeId}` : 'timers', replicaId, clock, JOB_LEASE_TTL_MS);
    const billingLease = new Lease(leases, 'billing', replicaId, clock, JOB_LEASE_TTL_MS);
    // Each region watches its own nodes: another region being down is not a node loss.
    const nodeLease = new Lease(leases, `nodes:${config.region}`, replicaId, clock, JOB_LEASE_TTL_MS);
    const runsTimers = role !== 'api';
    const runsBilling = role !== 'node';
    if (runsBilling && (await billingLease.held())) await billing.runJob();

    const consoleSessions = new ConsoleSessions(consoleSessionStore, auth, clock, config.consoleSessionTtlMs);
    const sandboxMetrics = new SandboxMetrics({
      liveSandboxes: () => store.listLive(),
      driver,
      traffic: async (id) => network?.traffic(id),
      clock,
      log,
      intervalMs: config.metricsIntervalMs,
      windowMs: config.metricsWindowMs,
    });
    const sandboxEvents = new SandboxEvents(db);
    const audit = new AuditLog({ store: new AuditLogStore(db), clock, log, retentionMs: config.auditRetentionMs });
    const webhookStore = new WebhookStore(db);
    const urlGuard = new UrlGuard(config.webhookAllowHosts, [config.network.pool]);
    const webhooks = new WebhookService({ store: webhookStore, guard: urlGuard, clock, key: secretsKey, wake: () => dispatcher.wake() });
    // The outbox runs on one API replica at a time (a node records events; API replicas deliver them).
    const webhookLease = new Lease(leases, 'webhooks', replicaId, clock, JOB_LEASE_TTL_MS);
    const dispatcher: WebhookDispatcher = new WebhookDispatcher({
      store: webhookStore,
      service: webhooks,
      guard: urlGuard,
      clock,
      log,
      held: () => (role === 'node' ? Promise.resolve(false) : webhookLease.held()),
      timeoutMs: opts.webhookTimeoutMs ?? WEBHOOK_TIMEOUT_MS,
      intervalMs: WEBHOOK_INTERVAL_MS,
      revokedSecrets: (ids) => secrets.revokedNames(ids),
    });
    // Other API replicas exist only on a shared store: with SQLite (one process) rate limits stay in memory, exact and without a write per request.
    const sharedStore = dialectOf(db) === 'postgres';
    const rateLimits = sharedStore ? new SharedRateLimits(new RateLimitStore(db), clock) : undefined;
    const nodes = new NodeService({ store: nodeStore, sandboxes: store, clock, log, lostMs: config.cluster.lostMs });
    const placement = new Placement({ store: nodeStore, clock, lostMs: config.cluster.lostMs });
    const relocation = directory && new SandboxRelocation({ nodes, placement, directory, volumes: volumeStore });
    // Asked only while serving, so the port is the one bound.
    const publicUrl = () => config.cluster.publicUrl ?? `http://${config.publicHost}:${boundPort(app, config.port)}`;
    const regions = new RegionService({ own: config.region, ownUrl: publicUrl, store: role === 'api' ? new RegionStore(db) : undefined, clock, liveMs: config.cluster.lostMs });
    const edge: RoleEdge | undefined =
      role === 'api'
        ? {
            role,
            key: config.cluster.key!,
            channel,
            nodes,
            drain: new NodeDrain({ nodes, sandboxes: store, relocation: relocation!, log }),
            forward: {
              directory: directory!,
              placement,
              catalog,
              snapshots: snapshotStore,
              regions,
              volumes: volumeHomes!,
            },
          }
        : role === 'node'
          ? {
              role,
              key: config.cluster.key!,
              channel,
              nodeId: nodeId!,
              driver,
              store,
              ssh: (stream, remoteAddress) => ssh!.accept(stream, remoteAddress),
              transfers: transfers!,
              mover: new SandboxMover({
                nodeId: nodeId!,
                store,
                driver,
                network,
                lock: sandboxes.lock,
                live: new LiveMoveSteps(sandboxes),
                peers: peers!,
                relocate: (templateId, t) => snapshotTemplateFiles(templateFiles, templateId, t),
                clock,
                log,
              }),
            }
          : undefined;

    const readiness = new Readiness(() => pingStore(db), role === 'node');
    const app = await buildApp(
      {
        config,
        auth,
        audit,
        webhooks,
        sandboxes,
        exec,
        code: new CodeInterpreterService({ sandboxes, previews }),
        files,
        changes: new SandboxChanges(sandboxes, files, role === 'node' ? await PeerLayers.open(peers!, nodeId!, join(config.dataDir, 'applying')) : undefined),
        processes,
        terminals,
        snapshots,
        secrets,
        previews,
        desktop: new DesktopService({ sandboxes, exec, previews, now: () => clock.now() }),
        connections,
        teamManagement,
        billing,
        metrics,
        templates,
        warmPool,
        consoleSessions,
        sandboxMetrics,
        sandboxEvents,
        driverName: driver.name,
        rateLimits,
        regions,
        volumes,
        volumeFiles,
        migrations: new SandboxMigrations({ sandboxes, store, relocator: relocation }),
        sshKeys,
        sshPort: () => sshPort,
        readiness,
      },
      log,
      edge,
      telemetry,
    );
    opened.push(() => app.close());
    await listenOn(app, config.host, config.port, 'PORT');
    const port = boundPort(app, config.port);
    // An API replica with internal TLS: nodes and operators reach its internal routes on a TLS listener of their own.
    const internalTls = role === 'api' ? channel.serverOptions() : undefined;
    const internal = internalTls && serve((req, res) => app.routing(req, res), internalTls, telemetry);
    if (internal) {
      channel.attach(internal);
      opened.push(() => new Promise((r) => internal.close(r)));
      await listenOn({ listen: (o) => listenServer(internal, o) }, config.host, config.cluster.internalPort, 'SANDPIT_INTERNAL_PORT');
    }
    // The E2B API serves sandboxes of this process's own engine (docs/e2b.md): not on an API replica.
    const e2b =
      config.e2bPort > 0 && role !== 'api'
        ? await buildE2bApp(
            {
              rateLimit: { max: config.rateLimitMax, windowMs: config.rateLimitWindowMs, shared: rateLimits },
              auth,
              sandboxes,
              files,
              fileMetadata: new FileMetadataService(new FileMetadataStore(db)),
              sessions,
              sandboxMetrics,
              snapshots,
              audit,
              region: config.region,
              e2bDomain: config.e2bDomain,
              previews,
              connections,
              volumes: { volumes, volumeFiles, volumeTree: new VolumeTree(volumes), volumeTokens: new VolumeTokens(secretsKey) },
              templateWorkdir: (id) => catalog.workdir(id),
              templateBuilds: {
                templates,
                tags: new TemplateTags(templateStore, catalog, clock),
                requests: new BuildRequests(templateStore, new BuildRequestStore(db)),
                uploads,
              },
            },
            log,
          )
        : undefined;
    if (e2b) opened.push(() => e2b.app.close());
    let e2bTls: { destroyTlsConnections(): void } | undefined;
    if (e2b) {
      // HTTPS on the same port, a certificate per host name from the installation's E2B CA: what E2B's SDK builds as `https://{port}-{id}.{domain}`.
      const ca = await HostCa.load(join(config.dataDir, 'e2b-ca'), 'Sandpit E2B CA');
      e2bTls = acceptTlsToo(e2b.app.server, {
        SNICallback: (name, cb) =>
          ca.contextFor(name).then(
            (ctx) => cb(null, ctx),
            (err: Error) => cb(err),
          ),
      });
      opened.push(async () => e2bTls?.destroyTlsConnections());
      await listenOn(e2b.app, config.host, config.e2bPort, 'SANDPIT_E2B_PORT');
    }
    if (ssh) opened.push(() => ssh.close());
    if (ssh && role !== 'node' && config.sshPort > 0) sshPort = await ssh.listen(config.sshPort, config.host);

    let ticking = false;
    const timer = setInterval(() => {
      if (ticking || !runsTimers) return;
      ticking = true;
      timerLease
        .held()
        .then((held) => (held ? sandboxes.runTimers() : undefined))
        .catch((err) => log.error({ err: String(err) }, 'timer run failed'))
        .finally(() => (ticking = false));
    }, opts.timerIntervalMs ?? TIMER_INTERVAL_MS);
    timer.unref();
    const engineWatch = new EngineWatch({ store, driver, agents, lock: sandboxes.lock, clock, log });
    if (role !== 'api') engineWatch.start();
    // An API replica announces itself to the other regions and, holding the lease, looks for lost nodes.
    let sweeping: Promise<void> | undefined;
    const apiTick = () =>
      Promise.all([regions.announce(), nodeLease.held().then((held) => (held ? nodes.sweep(config.region) : undefined))])
        .then(() => undefined)
        .catch((err) => {
          nodes.storeFailed();
          log.error({ err: String(err) }, 'node sweep failed');
        });
    if (role === 'api') await apiTick();
    const nodeSweep =
      role === 'api'
        ? setInterval(() => {
            sweeping ??= apiTick().finally(() => (sweeping = undefined));
          }, NODE_SWEEP_MS)
        : undefined;
    nodeSweep?.unref();
    const nodeAgent =
      role === 'node'
        ? new NodeAgent({
            config,
            url: config.cluster.nodeUrl ?? `${channel.scheme}://${config.host}:${port}`,
            engine: driver.name,
            templates: templateStore,
            copies: { held: () => [...copies!.held(), ...(shipping?.held() ?? [])] },
            allocated: async () => (await nodeStore.load([nodeId!])).get(nodeId!) ?? { sandboxes: 0, vcpus: 0, memoryMib: 0 },
            tokens: tokens!,
            channel,
            log,
            reconcile: async () => {
              await reconcile(store, driver, clock, log);
              await snapshots.reconcile();
            },
          })
        : undefined;
    if (nodeAgent) readiness.registeredBy(() => nodeAgent.registered);
    nodeAgent?.start();
    let billingRun: Promise<void> | undefined;
    const billingTimer = setInterval(() => {
      if (billingRun || !runsBilling) return;
      billingRun = billingLease
        .held()
        .then((held) => (held ? billing.runJob() : undefined))
        .catch((err) => log.error({ err: String(err) }, 'billing job failed'))
        .finally(() => (billingRun = undefined));
    }, BILLING_INTERVAL_MS);
    billingTimer.unref();
    if (role !== 'api') sandboxMetrics.start();
    const revocationSync = sharedStore
      ? setInterval(() => void secrets.syncRevocations().catch((err) => log.warn({ err: String(err) }, 'secret revocation sync failed')), SECRET_REVOCATION_SYNC_MS)
      : undefined;
    revocationSync?.unref();
    // On SQLite too: operator commands (sandpit team create) bump the same epoch. A request finding this late syncs first.
    const auditLease = new Lease(leases, 'audit-retention', replicaId, clock, JOB_LEASE_TTL_MS);
    const pruneAudit = () =>
      void auditLease
        .held()
        .then((held) => (held ? audit.prune() : 0))
        .catch((err) => log.warn({ err: String(err) }, 'audit log pruning failed'));
    if (role !== 'node') pruneAudit();
    if (role !== 'node') dispatcher.start();
    const auditPrune = role !== 'node' ? setInterval(pruneAudit, AUDIT_PRUNE_MS) : undefined;
    auditPrune?.unref();
    // Build-context uploads arrive on the E2B port: where it runs, those nothing uses go.
    const collectUploads = () =>
      void templateStore
        .archivesInUse()
        .then((inUse) => uploads.collect(inUse, Date.now()))
        .then((n) => n > 0 && log.info({ removed: n }, 'removed unused template uploads'))
        .catch((err) => log.warn({ err: String(err) }, 'collecting template uploads failed'));
    const uploadSweep = e2b ? setInterval(collectUploads, UPLOAD_COLLECT_MS) : undefined;
    uploadSweep?.unref();
    const authSync = setInterval(() => void auth.syncChanges().catch((err) => log.warn({ err: String(err) }, 'auth change sync failed')), AUTH_SYNC_MS);
    authSync.unref();

    let closingStep: string | undefined;
    return {
      app,
      db,
      driver,
      sandboxes,
      auth,
      templates: curated,
      billing,
      createdKey,
      telemetry,
      // A node with internal TLS serves HTTPS only.
      url: `${role === 'node' ? channel.scheme : 'http'}://${config.publicHost}:${port}`,
      ...(internalTls ? { internalUrl: `https://${config.publicHost}:${config.cluster.internalPort}` } : {}),
      ...(sshHostKey && sshPort > 0 ? { ssh: { port: sshPort, fingerprint: sshHostKey.fingerprint, publicKey: sshHostKey.publicLine } } : {}),
      get closingStep() {
        return closingStep;
      },
      async close() {
        const steps: [string, () => unknown][] = [
          [
            'timers',
            () => {
              clearInterval(timer);
              clearInterval(nodeSweep);
            },
          ],
          ['node sweep', () => sweeping],
          ['region withdrawal', () => (role === 'api' ? regions.withdraw().catch(() => undefined) : undefined)],
          ['node agent', () => nodeAgent?.stop()],
          ['snapshot shipping', () => shipping?.stop()],
          ['engine watch', () => engineWatch.stop()],
          ['sandbox teardowns', () => sandboxes.teardownsSettled()],
          ['moved sandboxes removed', () => (edge?.role === 'node' ? edge.mover.removalsSettled() : undefined)],
          [
            'billing job',
            () => {
              clearInterval(billingTimer);
              clearInterval(revocationSync);
              clearInterval(authSync);
              clearInterval(auditPrune);
              clearInterval(uploadSweep);
              return billingRun;
            },
          ],
          ['webhook dispatcher', () => dispatcher.close()],
          ['leases', () => Promise.all([timerLease.release(), billingLease.release(), nodeLease.release(), auditLease.release(), webhookLease.release()]).catch(() => undefined)],
          [
            'E2B port',
            () => {
              e2b?.close();
              e2bTls?.destroyTlsConnections();
              return e2b?.app.close();
            },
          ],
          ['SSH gateway', () => ssh?.close()],
          ['sandbox metrics', () => sandboxMetrics.close()],
          ['HTTP server', () => app.close()],
          [
            'internal listener',
            () => {
              internal?.closeAllConnections();
              return internal && new Promise((r) => internal.close(r));
            },
          ],
          ['internal channel', () => channel.close()],
          ['audit log', () => audit.flush()],
          ['rate limits', () => rateLimits?.close()],
          ['warm pool', () => warmPool.close()],
          ['template captures', () => captures.close()],
          ['agent connections', () => agents.closeAll()],
          ['network', () => network?.close()],
          ['engine', () => driver.close()],
          ['telemetry', () => telemetry?.shutdown()],
          ['store', () => db.destroy()],
        ];
        for (const [name, run] of steps) {
          closingStep = name;
          await run();
        }
        closingStep = undefined;
      },
    };
  } catch (err) {
    for (const close of opened.reverse()) await close().catch(() => undefined);
    await db.destroy();
    throw err;
  }
}

function boundPort(app: FastifyInstance, configured: number): number {
  const addr = app.server.address();
  return typeof addr === 'object' && addr ? addr.port : configured;
}

/** Listens, or fails with a message naming the setting when the port is taken (a start error is one line to a person). */
/** `server.listen` as a promise (what `listenOn` takes). */
function listenServer(server: Server, o: { host: string; port: number }): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve(`${o.host}:${o.port}`);
    });
  });
}

async function listenOn(app: { listen(o: { host: string; port: number }): Promise<string> }, host: string, port: number, setting: string): Promise<void> {
  try {
    await app.listen({ host, port });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new Error(`port ${port} (${setting}) is already in use on ${host}: stop what uses it or set ${setting} to another port`);
    if (code === 'EACCES') throw new Error(`port ${port} (${setting}) cannot be bound on ${host}: permission denied`);
    throw err;
  }
}
