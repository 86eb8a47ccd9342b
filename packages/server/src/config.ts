import { join } from 'node:path';

/**
 * Every environment variable the server reads: its default when unset (absent: the meaning says what
 * happens) and what it means. `loadConfig` is the only reader; the README's configuration table lists
 * each of them (a test checks both).
 */
export const SETTINGS = {
  HOST: { default: '0.0.0.0', meaning: 'address the API listens on' },
  PORT: { default: '3000', meaning: 'control-plane and data-plane port' },
  SANDPIT_E2B_PORT: { default: '3001', meaning: 'port of the E2B-compatible API (control plane and envd, see [docs/e2b.md](docs/e2b.md)); 0 turns it off' },
  SANDPIT_E2B_DOMAIN: {
    meaning:
      'domain under which every `*.<domain>` name reaches the E2B port (may end in `:port`; `localhost:3001` on one machine): sent as the `domain` of sandboxes (`getHost(port)` builds `{port}-{id}.<domain>`, served over HTTPS on the E2B port with a certificate of `<data dir>/e2b-ca/ca.crt`) and of volumes (`https://api.<domain>`); unset: no domain is sent',
  },
  SANDPIT_SSH_PORT: { default: '2222', meaning: 'port of the SSH gateway (`ssh -p 2222 <sandbox-id>@host`: shells, commands, scp/sftp, `-L` forwarding); 0 turns it off' },
  SANDPIT_DATA_DIR: { default: '/var/lib/sandpit', meaning: 'database, sandbox layers, keys' },
  SANDPIT_DATABASE_URL: { meaning: '`postgres://user:pass@host:5432/db` (or `?host=/socket/dir`): PostgreSQL as the store (default: SQLite in the data dir)' },
  SANDPIT_IMAGE_DIR: { meaning: 'built templates, a cache rebuilt when absent (default `$SANDPIT_DATA_DIR/images`)' },
  SANDPIT_PUBLIC_HOST: { default: 'localhost', meaning: 'host name clients use; sandbox and preview hosts are built under it' },
  SANDPIT_REGION: { default: 'local', meaning: 'region tag in sandbox ids ([a-z0-9]+)' },
  SANDPIT_ROLE: {
    default: 'all',
    meaning: '`all` (one host: API and sandboxes), `api` (an API replica: sandbox work goes to nodes) or `node` (runs sandboxes for the API replicas); see docs/cluster.md',
  },
  SANDPIT_CLUSTER_KEY: { meaning: 'shared secret (hex or base64, at least 32 bytes) signing the internal channel between API replicas and nodes; required for `api` and `node`' },
  SANDPIT_NODE_ID: { meaning: "a node's name (`[a-z0-9-]+`); required for `node`" },
  SANDPIT_NODE_URL: { meaning: 'where API replicas reach this node (default `http://<HOST>:<PORT>`, `https://` with internal TLS)' },
  SANDPIT_TLS_CA: {
    meaning:
      'internal mutual TLS: PEM file of the cluster CA(s) members trust; with SANDPIT_TLS_CERT and SANDPIT_TLS_KEY (all three or none), for `api` and `node`; files are read again when they change',
  },
  SANDPIT_TLS_CERT: { meaning: "internal mutual TLS: PEM file of this member's certificate, issued by the cluster CA" },
  SANDPIT_TLS_KEY: { meaning: "internal mutual TLS: PEM file of this member's private key" },
  SANDPIT_INTERNAL_PORT: { default: '0', meaning: "an API replica with internal TLS: the port of its TLS listener for nodes' heartbeats and operators (required then)" },
  SANDPIT_API_URL: { meaning: "a node's API replicas (comma-separated URLs) it registers and heartbeats with" },
  SANDPIT_NODE_LABELS: { meaning: "a node's labels, `k=v` comma-separated" },
  SANDPIT_NODE_MAX_SANDBOXES: { default: '0', meaning: 'sandboxes a node takes at most (0: as many as its memory holds)' },
  SANDPIT_NODE_MEMORY_MIB: { meaning: "memory a node offers sandboxes (default: the host's MemTotal)" },
  SANDPIT_NODE_VCPUS: { meaning: "vCPUs a node reports (default: the host's CPU count)" },
  SANDPIT_NODE_LOST_MS: { default: '10000', meaning: 'a node silent this long is lost: its sandboxes end `failed` (`node_lost`)' },
  SANDPIT_PUBLIC_URL: { meaning: 'base URL clients reach the API at, for the URLs a node hands out (default `http://<SANDPIT_PUBLIC_HOST>:<port>`)' },
  SANDPIT_DRIVER: { default: 'auto', meaning: '`auto`, `container` or `gvisor`' },
  SANDPIT_RUNSC: {
    meaning:
      "gvisor: the runsc binary new sandboxes run on (default: Debian 13's build that `scripts/bootstrap.sh` installs in `/var/lib/sandpit/tools/runsc-20240729`, else `runsc` on PATH); a sandbox or snapshot keeps the build it was created with",
  },
  SANDPIT_RUNSC_PLATFORM: {
    default: 'systrap',
    meaning:
      'gvisor: `systrap` or `ptrace`, the platform new sandboxes run on; a build without systrap (the Debian 12 one, used when bootstrap could not fetch the Debian 13 one) runs ptrace (see [docs/drivers.md](docs/drivers.md))',
  },
  SANDPIT_GVISOR_MIN_CPUS: {
    default: '1',
    meaning:
      "gvisor: the fewest CPUs a new sandbox's engine boots on (runsc sets the sentry's `GOMAXPROCS` from them; the CFS quota and the CPU count shown inside stay `vcpu_count`). `2` lets systrap spin instead of waking the sentry: `stat()` took 5 us instead of 79 and a command's round trip 25 ms instead of 45 on a quiet host, but an idle engine took 5.4% of a CPU instead of 3.6%, eight sandboxes busy at once finished 1.26x later, and the code interpreter's tests met connection resets on it (see [docs/drivers.md](docs/drivers.md))",
  },
  SANDPIT_CHECKPOINT_COMPRESSION: {
    default: 'none',
    meaning:
      'gvisor: `none` or `flate-best-speed`, how the memory of a pause, snapshot or template capture is written (builds from 2024 on). Measured with the code interpreter: none pauses in 1.0 s and resumes in 1.2 s against 5.3 s and 3.5 s, for 3.8x the disk (see [docs/drivers.md](docs/drivers.md))',
  },
  SANDPIT_CONTAINER_ID_BASE: {
    meaning:
      "container driver: where sandboxes' host id ranges start; each sandbox's ids 0-65535 are 65,536 host ids of its own from there up (a multiple of 65536; default 1879048192 = 0x70000000, see [docs/drivers.md](docs/drivers.md))",
  },
  SANDPIT_BOOTSTRAP_API_KEY: { meaning: 'first start with an empty store: team `default` with this admin key' },
  SANDPIT_LOG_LEVEL: { default: 'info', meaning: 'pino log level' },
  SANDPIT_SHUTDOWN_TIMEOUT_S: {
    default: '25',
    meaning: 'seconds a stop (SIGTERM, SIGINT) may take; past it the process exits anyway, naming the step it waited on (sandboxes live on and are reconciled at the next start)',
  },
  SANDPIT_AGENT_BINARY: { meaning: 'in-sandbox agent (default `packages/agent/build/sandpit-agent`)' },
  SANDPIT_RATE_LIMIT: { default: '2000', meaning: 'requests per key (or client address) per window; 0 disables' },
  SANDPIT_RATE_LIMIT_WINDOW_MS: { default: '10000', meaning: 'rate limit window' },
  SANDPIT_MAX_ACTIVE_SANDBOXES: { default: '100', meaning: 'per-team active sandbox cap' },
  SANDPIT_MAX_CONCURRENT_STARTS: { default: '4', meaning: 'sandbox starts (network and engine) run at once on this host; more queue in arrival order (at least 1)' },
  SANDPIT_DISK_RESERVE_MIB: { default: '256', meaning: 'free space kept on the data disk for running sandboxes: below it, creates, pauses, snapshots, template builds and uploads answer 507' },
  SANDPIT_MAX_SNAPSHOTS: { default: '200', meaning: 'per-team snapshot cap' },
  SANDPIT_MAX_SNAPSHOTS_IN_FLIGHT: { default: '4', meaning: 'per-team cap on snapshots being captured' },
  SANDPIT_SNAPSHOT_DEADLINE_MS: { default: '30000', meaning: 'how long POST /snapshot waits before answering 202' },
  SANDPIT_MAX_VOLUMES: { default: '100', meaning: 'per-team volume cap' },
  SANDPIT_VOLUME_STORE_GIB: { default: '1024', meaning: "apparent size of the sparse btrfs image holding this host's volumes (disk is used only as volumes fill)" },
  SANDPIT_MAX_CONCURRENT_BUILDS: { default: '2', meaning: 'per-team concurrent template builds' },
  SANDPIT_MAX_TEMPLATES: { default: '50', meaning: 'per-team live templates' },
  SANDPIT_TEMPLATE_MAX_MIB: { default: '8192', meaning: 'largest template (all its layers)' },
  SANDPIT_TEMPLATE_CAPTURE: { default: '1', meaning: '0: no template captures (gvisor), every sandbox boots' },
  SANDPIT_DOCKER_HUB_MIRROR: { meaning: "registry (`host:port`) that images named without one (Docker Hub's, such as `ubuntu:22.04`) are pulled from, as Docker's registry-mirrors" },
  SANDPIT_INSECURE_REGISTRIES: { meaning: "image registries (`host:port`, comma-separated) reached over plain HTTP; all others over HTTPS with the host's CA bundle" },
  SANDPIT_UNUSED_FILES_GRACE_S: {
    default: '3600',
    meaning:
      "seconds a pulled image or template layer of this host's data dir that no live template, sandbox or snapshot uses is kept before its files are removed (checked every grace/4 seconds, at most every minute; not the shared `SANDPIT_IMAGE_DIR`)",
  },
  SANDPIT_IMAGE_MAX_MIB: { default: '8192', meaning: 'largest image a template is built from, compressed and unpacked (`image_pull_failed: image_too_large`)' },
  SANDPIT_DEBIAN_MIRROR: { meaning: "Debian mirror for the base template (default: the host's apt mirror)" },
  SANDPIT_WARM_POOL: { default: '2', meaning: 'pre-started `platform/base` sandboxes' },
  SANDPIT_WARM_POOL_MIN_AVAILABLE_MIB: { default: '1024', meaning: 'below this MemAvailable the warm pool stops refilling and shrinks' },
  SANDPIT_WARM_POOL_INTERVAL_MS: { default: '500', meaning: 'how often the warm pool refills' },
  SANDPIT_NET_POOL: { default: '100.96.0.0/12', meaning: "sandbox addresses (must avoid the host's own ranges)" },
  SANDPIT_NET_WARM: { default: '32', meaning: 'network namespaces kept ready (0-64): a burst of creates takes these instead of making its own' },
  SANDPIT_DNS_UPSTREAM: { meaning: 'DNS servers (ip[:port], comma-separated) sandboxes resolve through (default: /etc/resolv.conf)' },
  SANDPIT_EGRESS_UPSTREAM_CA: { meaning: "PEM of CAs the egress proxy and sandboxes trust (default: the host's bundle)" },
  SANDPIT_METRICS_INTERVAL_MS: { default: '10000', meaning: 'per-sandbox metrics: time between samples of every active sandbox (at least 100)' },
  SANDPIT_METRICS_WINDOW_MS: { default: '3600000', meaning: 'per-sandbox metrics: how long points are kept (in memory)' },
  SANDPIT_CONSOLE_SESSION_TTL_S: { default: '43200', meaning: 'lifetime of a web console sign-in (session cookie)' },
  SANDPIT_CONSOLE_DIR: { meaning: 'built console assets served at /console (default `packages/console/dist`)' },
  SANDPIT_SECRETS_KEY: { meaning: 'AES-256-GCM key for secrets at rest, hex or base64 (default: a key file in the data dir)' },
  SANDPIT_AUDIT_RETENTION_DAYS: { default: '90', meaning: 'how long audit log entries are kept (days, at least 1)' },
  SANDPIT_WEBHOOK_ALLOW_HOSTS: { meaning: 'webhook receivers (`host:port`, comma-separated) allowed although they are loopback, private or link-local addresses (tests, private receivers)' },
  OTEL_EXPORTER_OTLP_ENDPOINT: { meaning: 'OTLP/HTTP (protobuf) base URL, e.g. `http://collector:4318`: traces go to `/v1/traces`, metrics to `/v1/metrics`; unset: OpenTelemetry is off' },
  OTEL_SERVICE_NAME: { default: 'sandpit', meaning: 'the `service.name` of traces and metrics' },
  OTEL_TRACES_SAMPLER: {
    default: 'parentbased_always_on',
    meaning:
      "which requests are traced: `always_on`, `always_off`, `traceidratio`, `parentbased_always_on`, `parentbased_always_off` or `parentbased_traceidratio` (parentbased: a caller's sampled `traceparent` decides)",
  },
  OTEL_TRACES_SAMPLER_ARG: { default: '1', meaning: 'the ratio of the `traceidratio` samplers (0 to 1)' },
  OTEL_METRIC_EXPORT_INTERVAL: { default: '60000', meaning: 'milliseconds between OTLP metric exports' },
  SANDPIT_CORS_ORIGINS: { meaning: 'web origins (comma-separated, or `*`) allowed to call the API from a browser; unset: none (no CORS headers)' },
} as const satisfies Record<string, Setting>;

interface Setting {
  default?: string;
  meaning: string;
}

export type SettingName = keyof typeof SETTINGS;
type Env = Partial<Record<string, string>>;

/** Everything the server reads from its environment, with working defaults. */
export interface Config {
  host: string;
  port: number;
  /** Host name clients use; sandbox and preview hosts are built under it. */
  publicHost: string;
  region: string;
  dataDir: string;
  /** postgres://... selects PostgreSQL as the store; unset keeps SQLite in the data directory. */
  databaseUrl?: string;
  imageDir: string;
  driver: 'auto' | 'container' | 'gvisor';
  /** gVisor: the runsc new sandboxes run on (unset: the driver's default) and its platform. */
  runsc?: string;
  runscPlatform: 'ptrace' | 'systrap';
  /** gVisor: how checkpoints store memory. */
  checkpointCompression: 'none' | 'flate-best-speed';
  /** gVisor: the fewest CPUs a new sandbox's engine boots on. */
  gvisorMinCpus: number;
  /** Container driver: host id of sandbox root (unset: the driver's default). */
  containerIdBase?: number;
  bootstrapApiKey?: string;
  logLevel: string;
  /** How long a stop may take before the process exits anyway. */
  shutdownTimeoutMs: number;
  /** Requests per key (or client address) in each rate window; 0 disables. */
  rateLimitMax: number;
  rateLimitWindowMs: number;
  maxActiveSandboxesPerTeam: number;
  maxConcurrentStarts: number;
  diskReserveMib: number;
  /** Per-team snapshot caps (teams.limits max_snapshots / max_snapshots_in_flight override them). */
  maxSnapshotsPerTeam: number;
  maxSnapshotsInFlightPerTeam: number;
  /** How long POST /snapshot waits for the capture before answering 202 and settling it in the background. */
  snapshotDeadlineMs: number;
  /** Per-team volume cap, and the size of the store holding this host's volumes. */
  maxVolumesPerTeam: number;
  volumeStoreGiB: number;
  agentBinary: string;
  /** Port of the E2B-compatible API (control plane and envd); 0 turns it off. */
  e2bPort: number;
  /** E2B domain of the E2B port (`api.<domain>` over HTTPS), told to the SDK with volumes; undefined: none. */
  e2bDomain?: string;
  /** Port of the SSH gateway; 0 turns it off. */
  sshPort: number;
  templates: TemplateSettings;
  warmPool: WarmPoolSettings;
  network: NetworkSettings;
  /** The secrets key as given (hex or base64); unset: a key file in the data dir. */
  secretsKey?: string;
  /** Browser origins allowed to call the API (CORS); empty: none, `*`: any. */
  corsOrigins: string[];
  /** Built console assets served at /console. */
  consoleDir: string;
  consoleSessionTtlMs: number;
  /** Per-sandbox metrics: time between samples and how long points are kept. */
  metricsIntervalMs: number;
  metricsWindowMs: number;
  /** How long audit log entries are kept. */
  auditRetentionMs: number;
  otel: OtelSettings;
  /** Webhook receivers (`host:port`) exempted from the SSRF guard. */
  webhookAllowHosts: string[];
  cluster: ClusterSettings;
}

export type Role = 'all' | 'api' | 'node';

/** OpenTelemetry (the standard OTEL_* variables; the exporters also read OTEL_EXPORTER_OTLP_HEADERS and the like themselves). */
export interface OtelSettings {
  /** Unset: tracing and OTLP metrics are off. */
  endpoint?: string;
  serviceName: string;
  metricIntervalMs: number;
  /** OTEL_TRACES_SAMPLER and its ratio. */
  sampler: { name: SamplerName; ratio: number };
}

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** Several hosts: which role this process plays and how it reaches the others. */
export interface ClusterSettings {
  role: Role;
  /** Signs and checks internal tokens; set for `api` and `node`. */
  key?: Buffer;
  /** Set for `node`. */
  nodeId?: string;
  nodeUrl?: string;
  apiUrls: string[];
  labels: Record<string, string>;
  maxSandboxes: number;
  memoryMib?: number;
  vcpus?: number;
  lostMs: number;
  publicUrl?: string;
  /** Mutual TLS on the internal channel; unset: the cluster key alone. */
  tls?: { ca: string; cert: string; key: string };
  /** An API replica's internal TLS listener. */
  internalPort: number;
}

export interface TemplateSettings {
  /** Concurrent builds per team (teams.limits max_concurrent_builds overrides). */
  maxBuilds: number;
  /** Live templates per team (teams.limits max_templates overrides). */
  maxTemplates: number;
  maxTemplateBytes: number;
  /** Template captures where the engine can (gvisor); off: every sandbox boots and existing captures are removed. */
  capture: boolean;
  /** Unset: the host's configured mirror. */
  debianMirror?: string;
  /** Registries (`host:port`) reached over plain HTTP instead of HTTPS, as Docker's insecure-registries. */
  insecureRegistries: string[];
  /** Where Docker Hub's images are pulled from instead (`host:port`). */
  dockerHubMirror?: string;
  /** Largest image a template may be built from (compressed as declared, and unpacked). */
  imageMaxBytes: number;
  /** How long an image or layer nothing uses is kept before it is removed. */
  unusedGraceMs: number;
}

export interface WarmPoolSettings {
  /** Pre-started platform/base sandboxes. */
  baseSize: number;
  /** Below this much MemAvailable the pool stops refilling and gives sandboxes back. */
  minAvailableMib: number;
  intervalMs: number;
}

export interface NetworkSettings {
  pool: string;
  /** Namespaces kept ready so a create does not wait for one. */
  warm: number;
  dnsUpstream?: string;
  /** PEM file of extra CAs (an operator's private CAs); unset: the host's bundle. */
  upstreamCaFile?: string;
}

/** A host name, optionally with a port: the SDK prefixes `https://api.` to it. */
function e2bDomainOf(env: Env): string | undefined {
  const domain = str(env, 'SANDPIT_E2B_DOMAIN');
  if (domain !== undefined && !/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?(:\d{1,5})?$/i.test(domain)) {
    throw new Error(`SANDPIT_E2B_DOMAIN must be a host name, optionally with :port (no scheme, no path), got '${domain}'`);
  }
  return domain;
}

function str(env: Env, name: SettingName): string | undefined {
  const raw = env[name];
  if (raw !== undefined && raw !== '') return raw;
  const s: Setting = SETTINGS[name];
  return s.default;
}

/** A non-negative integer setting (at most `max`); unset or empty means its default. */
function int(env: Env, name: SettingName, max = Number.MAX_SAFE_INTEGER): number {
  const raw = str(env, name) ?? '';
  const n = Number(raw);
  if (raw === '' || !Number.isInteger(n) || n < 0 || n > max) {
    throw new Error(`${name} must be ${max === Number.MAX_SAFE_INTEGER ? 'a non-negative integer' : `an integer from 0 to ${max}`}, got '${raw}'`);
  }
  return n;
}

export function loadConfig(env: Env = process.env): Config {
  const dataDir = str(env, 'SANDPIT_DATA_DIR')!;
  const region = str(env, 'SANDPIT_REGION')!;
  if (!/^[a-z0-9]+$/.test(region)) throw new Error(`SANDPIT_REGION must match [a-z0-9]+, got '${region}'`);
  const driver = str(env, 'SANDPIT_DRIVER');
  if (driver !== 'auto' && driver !== 'container' && driver !== 'gvisor') {
    throw new Error(`SANDPIT_DRIVER must be auto, container or gvisor, got '${driver}'`);
  }
  const runscPlatform = str(env, 'SANDPIT_RUNSC_PLATFORM');
  if (runscPlatform !== 'ptrace' && runscPlatform !== 'systrap') throw new Error(`SANDPIT_RUNSC_PLATFORM must be ptrace or systrap, got '${runscPlatform}'`);
  const checkpointCompression = str(env, 'SANDPIT_CHECKPOINT_COMPRESSION');
  if (checkpointCompression !== 'none' && checkpointCompression !== 'flate-best-speed') {
    throw new Error(`SANDPIT_CHECKPOINT_COMPRESSION must be none or flate-best-speed, got '${checkpointCompression}'`);
  }
  const databaseUrl = str(env, 'SANDPIT_DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) throw new Error('SANDPIT_DATABASE_URL must be a postgres:// URL');
  return {
    host: str(env, 'HOST')!,
    port: int(env, 'PORT'),
    publicHost: str(env, 'SANDPIT_PUBLIC_HOST')!,
    region,
    dataDir,
    databaseUrl,
    imageDir: str(env, 'SANDPIT_IMAGE_DIR') ?? join(dataDir, 'images'),
    driver,
    runsc: str(env, 'SANDPIT_RUNSC'),
    runscPlatform,
    checkpointCompression,
    gvisorMinCpus: Math.max(1, int(env, 'SANDPIT_GVISOR_MIN_CPUS', 64)),
    containerIdBase: str(env, 'SANDPIT_CONTAINER_ID_BASE') === undefined ? undefined : int(env, 'SANDPIT_CONTAINER_ID_BASE', 2 ** 32 - 2 * 65536),
    bootstrapApiKey: str(env, 'SANDPIT_BOOTSTRAP_API_KEY'),
    logLevel: str(env, 'SANDPIT_LOG_LEVEL')!,
    shutdownTimeoutMs: int(env, 'SANDPIT_SHUTDOWN_TIMEOUT_S') * 1000,
    rateLimitMax: int(env, 'SANDPIT_RATE_LIMIT'),
    rateLimitWindowMs: int(env, 'SANDPIT_RATE_LIMIT_WINDOW_MS'),
    maxActiveSandboxesPerTeam: int(env, 'SANDPIT_MAX_ACTIVE_SANDBOXES'),
    maxConcurrentStarts: Math.max(1, int(env, 'SANDPIT_MAX_CONCURRENT_STARTS')),
    diskReserveMib: int(env, 'SANDPIT_DISK_RESERVE_MIB'),
    maxSnapshotsPerTeam: int(env, 'SANDPIT_MAX_SNAPSHOTS'),
    maxSnapshotsInFlightPerTeam: int(env, 'SANDPIT_MAX_SNAPSHOTS_IN_FLIGHT'),
    snapshotDeadlineMs: int(env, 'SANDPIT_SNAPSHOT_DEADLINE_MS'),
    maxVolumesPerTeam: int(env, 'SANDPIT_MAX_VOLUMES'),
    volumeStoreGiB: int(env, 'SANDPIT_VOLUME_STORE_GIB'),
    agentBinary: str(env, 'SANDPIT_AGENT_BINARY') ?? new URL('../../agent/build/sandpit-agent', import.meta.url).pathname,
    templates: {
      maxBuilds: int(env, 'SANDPIT_MAX_CONCURRENT_BUILDS'),
      maxTemplates: int(env, 'SANDPIT_MAX_TEMPLATES'),
      maxTemplateBytes: int(env, 'SANDPIT_TEMPLATE_MAX_MIB') * 1024 * 1024,
      capture: str(env, 'SANDPIT_TEMPLATE_CAPTURE') !== '0',
      debianMirror: str(env, 'SANDPIT_DEBIAN_MIRROR'),
      insecureRegistries: (str(env, 'SANDPIT_INSECURE_REGISTRIES') ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
      imageMaxBytes: int(env, 'SANDPIT_IMAGE_MAX_MIB') * 1024 * 1024,
      dockerHubMirror: str(env, 'SANDPIT_DOCKER_HUB_MIRROR')?.toLowerCase(),
      unusedGraceMs: int(env, 'SANDPIT_UNUSED_FILES_GRACE_S') * 1000,
    },
    warmPool: {
      baseSize: int(env, 'SANDPIT_WARM_POOL'),
      minAvailableMib: int(env, 'SANDPIT_WARM_POOL_MIN_AVAILABLE_MIB'),
      intervalMs: int(env, 'SANDPIT_WARM_POOL_INTERVAL_MS'),
    },
    network: {
      pool: str(env, 'SANDPIT_NET_POOL')!,
      warm: int(env, 'SANDPIT_NET_WARM', 64),
      dnsUpstream: str(env, 'SANDPIT_DNS_UPSTREAM'),
      upstreamCaFile: str(env, 'SANDPIT_EGRESS_UPSTREAM_CA'),
    },
    secretsKey: str(env, 'SANDPIT_SECRETS_KEY'),
    e2bPort: int(env, 'SANDPIT_E2B_PORT', 65535),
    e2bDomain: e2bDomainOf(env),
    sshPort: int(env, 'SANDPIT_SSH_PORT', 65535),
    corsOrigins: (str(env, 'SANDPIT_CORS_ORIGINS') ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter((o) => o !== ''),
    consoleDir: str(env, 'SANDPIT_CONSOLE_DIR') ?? new URL('../../console/dist', import.meta.url).pathname,
    consoleSessionTtlMs: int(env, 'SANDPIT_CONSOLE_SESSION_TTL_S') * 1000,
    metricsIntervalMs: Math.max(100, int(env, 'SANDPIT_METRICS_INTERVAL_MS')),
    metricsWindowMs: int(env, 'SANDPIT_METRICS_WINDOW_MS'),
    auditRetentionMs: Math.max(1, int(env, 'SANDPIT_AUDIT_RETENTION_DAYS')) * 86_400_000,
    otel: {
      endpoint: str(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'),
      serviceName: str(env, 'OTEL_SERVICE_NAME')!,
      metricIntervalMs: Math.max(100, int(env, 'OTEL_METRIC_EXPORT_INTERVAL')),
      sampler: samplerSettings(env),
    },
    webhookAllowHosts: (str(env, 'SANDPIT_WEBHOOK_ALLOW_HOSTS') ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    cluster: clusterSettings(env),
  };
}

function samplerSettings(env: Env): OtelSettings['sampler'] {
  const name = str(env, 'OTEL_TRACES_SAMPLER')!;
  if (!(SAMPLERS as readonly string[]).includes(name)) throw new Error(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}, got '${name}'`);
  const ratio = Number(str(env, 'OTEL_TRACES_SAMPLER_ARG'));
  if (!(ratio >= 0 && ratio <= 1)) throw new Error(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got '${str(env, 'OTEL_TRACES_SAMPLER_ARG')}'`);
  return { name: name as SamplerName, ratio };
}

function clusterSettings(env: Env): ClusterSettings {
  const role = str(env, 'SANDPIT_ROLE');
  if (role !== 'all' && role !== 'api' && role !== 'node') throw new Error(`SANDPIT_ROLE must be all, api or node, got '${role}'`);
  const rawKey = str(env, 'SANDPIT_CLUSTER_KEY');
  const key = rawKey === undefined ? undefined : /^[0-9a-f]+$/i.test(rawKey) ? Buffer.from(rawKey, 'hex') : Buffer.from(rawKey, 'base64');
  if (role !== 'all' && (!key || key.length < 32)) throw new Error(`SANDPIT_CLUSTER_KEY (at least 32 bytes, hex or base64) is required for SANDPIT_ROLE=${role}`);
  const nodeId = str(env, 'SANDPIT_NODE_ID');
  if (role === 'node' && !nodeId) throw new Error('SANDPIT_NODE_ID is required for SANDPIT_ROLE=node');
  if (nodeId !== undefined && !/^[a-z0-9][a-z0-9-]{0,62}$/.test(nodeId)) throw new Error(`SANDPIT_NODE_ID must match [a-z0-9-]+, got '${nodeId}'`);
  const list = (name: SettingName) =>
    (str(env, name) ?? '')
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
  const apiUrls = list('SANDPIT_API_URL');
  if (role === 'node' && apiUrls.length === 0) throw new Error('SANDPIT_API_URL (the API replicas to register with) is required for SANDPIT_ROLE=node');
  const labels: Record<string, string> = {};
  for (const kv of list('SANDPIT_NODE_LABELS')) {
    const [k, v] = kv.split('=');
    if (!k || v === undefined) throw new Error(`SANDPIT_NODE_LABELS: '${kv}' is not k=v`);
    labels[k] = v;
  }
  const optionalInt = (name: SettingName) => (str(env, name) === undefined ? undefined : int(env, name));
  const tlsFiles = { ca: str(env, 'SANDPIT_TLS_CA'), cert: str(env, 'SANDPIT_TLS_CERT'), key: str(env, 'SANDPIT_TLS_KEY') };
  const given = Object.values(tlsFiles).filter((v) => v !== undefined).length;
  if (given !== 0 && given !== 3) throw new Error('SANDPIT_TLS_CA, SANDPIT_TLS_CERT and SANDPIT_TLS_KEY go together: set all three or none');
  // Read for any role: `sandpit cluster ... --via-env` from an operator's machine (role `all`) calls with them.
  const tls = given === 3 ? (tlsFiles as { ca: string; cert: string; key: string }) : undefined;
  const internalPort = int(env, 'SANDPIT_INTERNAL_PORT');
  if (tls && role === 'api' && internalPort === 0) throw new Error('SANDPIT_INTERNAL_PORT (the TLS listener nodes heartbeat to) is required for SANDPIT_ROLE=api with internal TLS');
  if (tls && role === 'node') {
    const plain = apiUrls.find((u) => !u.startsWith('https://'));
    if (plain) throw new Error(`with internal TLS, SANDPIT_API_URL names the API replicas' internal TLS listeners (https://...), got '${plain}'`);
  }
  return {
    role,
    tls,
    internalPort,
    key,
    nodeId: role === 'node' ? nodeId : undefined,
    nodeUrl: str(env, 'SANDPIT_NODE_URL'),
    apiUrls,
    labels,
    maxSandboxes: int(env, 'SANDPIT_NODE_MAX_SANDBOXES'),
    memoryMib: optionalInt('SANDPIT_NODE_MEMORY_MIB'),
    vcpus: optionalInt('SANDPIT_NODE_VCPUS'),
    lostMs: int(env, 'SANDPIT_NODE_LOST_MS'),
    publicUrl: str(env, 'SANDPIT_PUBLIC_URL')?.replace(/\/+$/, ''),
  };
}
