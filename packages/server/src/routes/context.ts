import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { AuthService } from '../services/access/auth.ts';
import type { AuditLog } from '../services/audit/audit-log.ts';
import type { WebhookService } from '../services/webhooks/webhooks.ts';
import type { Principal } from '../services/access/principal.ts';
import type { BillingService } from '../services/billing/billing-service.ts';
import type { ConsoleSessions } from '../services/access/console-sessions.ts';
import type { ExecService } from '../services/data-plane/exec.ts';
import type { SandboxChanges } from '../services/data-plane/changes.ts';
import type { CodeInterpreterService } from '../services/code/code-interpreter.ts';
import type { FileService } from '../services/data-plane/files.ts';
import type { PlatformConnections } from '../services/sandboxes/platform-connections.ts';
import type { PreviewPortService } from '../services/networking/preview-ports.ts';
import type { DesktopService } from '../services/desktop/desktop.ts';
import type { RegionService } from '../services/fleet/regions.ts';
import type { PlatformMetrics } from '../services/metering-metrics.ts';
import type { ProcessService } from '../services/data-plane/processes.ts';
import type { SharedRateLimits } from '../services/access/rate-limits.ts';
import type { SandboxEvents } from '../services/sandboxes/sandbox-events.ts';
import type { SandboxMetrics } from '../services/sandboxes/sandbox-metrics.ts';
import type { SandboxMigrations } from '../services/sandboxes/sandbox-migrations.ts';
import type { SandboxService } from '../services/sandboxes/sandboxes.ts';
import type { SecretsService } from '../services/networking/secrets.ts';
import type { SnapshotService } from '../services/snapshots/snapshots.ts';
import type { TeamManagementService } from '../services/access/team-management.ts';
import type { TeamTemplates } from '../services/templates/team-templates.ts';
import type { WarmPool } from '../services/sandboxes/warm-pool.ts';
import { sessionCookieOf, sessionPrincipal } from './session-cookie.ts';
import type { TerminalService } from '../services/data-plane/terminals.ts';
import type { VolumeFiles } from '../services/volumes/volume-files.ts';
import type { VolumeService } from '../services/volumes/volumes.ts';
import type { SshKeyService } from '../services/ssh/ssh-keys.ts';
import type { Readiness } from '../services/fleet/readiness.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** The services routes may call; routes never reach the runtime directly. */
export interface Services {
  config: Config;
  auth: AuthService;
  audit: AuditLog;
  webhooks: WebhookService;
  sandboxes: SandboxService;
  exec: ExecService;
  code: CodeInterpreterService;
  files: FileService;
  changes: SandboxChanges;
  processes: ProcessService;
  terminals: TerminalService;
  snapshots: SnapshotService;
  secrets: SecretsService;
  previews: PreviewPortService;
  desktop: DesktopService;
  /** Where the gateway registers the connections it holds to sandboxes, closed before a capture. */
  connections: PlatformConnections;
  teamManagement: TeamManagementService;
  billing: BillingService;
  metrics: PlatformMetrics;
  templates: TeamTemplates;
  warmPool: WarmPool;
  consoleSessions: ConsoleSessions;
  sandboxMetrics: SandboxMetrics;
  sandboxEvents: SandboxEvents;
  driverName: string;
  /** Regions this one knows, for GET /info (several regions). */
  regions: RegionService;
  sshKeys: SshKeyService;
  /** The SSH gateway's bound port; 0 when it is off. */
  sshPort: () => number;
  /** Rate-limit counts shared by API replicas (PostgreSQL); unset, each process counts in memory. */
  rateLimits?: SharedRateLimits;
  volumes: VolumeService;
  volumeFiles: VolumeFiles;
  migrations: SandboxMigrations;
  /** What GET /readyz checks. */
  readiness: Readiness;
}

/** onRequest hook: authentication comes before validation, so a bad key is 401 whatever the body. A console session cookie stands in for the key. */
export function apiKeyHook(auth: AuthService) {
  return async (req: FastifyRequest, _reply: FastifyReply) => {
    const raw = req.headers['x-api-key'];
    const key = Array.isArray(raw) ? raw[0] : raw;
    req.principal = (key === undefined ? await sessionPrincipal(req, auth) : undefined) ?? (await auth.authenticate(key));
  };
}

/**
 * The team a request's credentials name, from its headers alone (an API replica choosing the node for
 * a volume named in the path, before any route runs); undefined when they name none.
 */
export async function teamOfHeaders(auth: AuthService, headers: IncomingHttpHeaders): Promise<string | undefined> {
  const raw = headers['x-api-key'];
  const key = Array.isArray(raw) ? raw[0] : raw;
  const session = key === undefined && auth.sessions ? sessionCookieOf(headers.cookie) : undefined;
  const p = await (session !== undefined ? auth.authenticateSession(session) : auth.authenticate(key)).catch(() => undefined);
  return p?.teamId;
}

export function principal(req: FastifyRequest): Principal {
  if (!req.principal) throw new Error('route is missing the API key hook');
  return req.principal;
}
