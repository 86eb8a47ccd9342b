import { join } from 'node:path';

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
  bootstrapApiKey?: string;
  logLevel: string;
  /** Requests per key (or client address) in each rate window; 0 disables. */
  rateLimitMax: number;
  rateLimitWindowMs: number;
  maxActiveSandboxesPerTeam: number;
  /** Per-team snapshot caps (teams.limits max_snapshots / max_snapshots_in_flight override them). */
  maxSnapshotsPerTeam: number;
  maxSnapshotsInFlightPerTeam: number;
  /** How long POST /snapshot waits for the capture before answering 202 and settling it in the background. */
  snapshotDeadlineMs: number;
  agentBinary: string;
}

/** A non-negative integer setting; unset or empty means the fallback. */
export function envInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got '${raw}'`);
  return n;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = env.SANDPIT_DATA_DIR || '/var/lib/sandpit';
  const region = env.SANDPIT_REGION || 'local';
  if (!/^[a-z0-9]+$/.test(region)) throw new Error(`SANDPIT_REGION must match [a-z0-9]+, got '${region}'`);
  const driver = env.SANDPIT_DRIVER || 'auto';
  if (driver !== 'auto' && driver !== 'container' && driver !== 'gvisor') {
    throw new Error(`SANDPIT_DRIVER must be auto, container or gvisor, got '${driver}'`);
  }
  const databaseUrl = env.SANDPIT_DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) throw new Error('SANDPIT_DATABASE_URL must be a postgres:// URL');
  return {
    host: env.HOST || '0.0.0.0',
    port: envInt(env, 'PORT', 3000),
    publicHost: env.SANDPIT_PUBLIC_HOST || 'localhost',
    region,
    dataDir,
    databaseUrl,
    imageDir: env.SANDPIT_IMAGE_DIR || join(dataDir, 'images'),
    driver,
    bootstrapApiKey: env.SANDPIT_BOOTSTRAP_API_KEY || undefined,
    logLevel: env.SANDPIT_LOG_LEVEL || 'info',
    rateLimitMax: envInt(env, 'SANDPIT_RATE_LIMIT', 2000),
    rateLimitWindowMs: envInt(env, 'SANDPIT_RATE_LIMIT_WINDOW_MS', 10_000),
    maxActiveSandboxesPerTeam: envInt(env, 'SANDPIT_MAX_ACTIVE_SANDBOXES', 100),
    maxSnapshotsPerTeam: envInt(env, 'SANDPIT_MAX_SNAPSHOTS', 200),
    maxSnapshotsInFlightPerTeam: envInt(env, 'SANDPIT_MAX_SNAPSHOTS_IN_FLIGHT', 4),
    snapshotDeadlineMs: envInt(env, 'SANDPIT_SNAPSHOT_DEADLINE_MS', 30_000),
    agentBinary: env.SANDPIT_AGENT_BINARY || new URL('../../agent/build/sandpit-agent', import.meta.url).pathname,
  };
}
