import type { FastifyInstance, FastifyRequest } from 'fastify';
import { taggedSandboxId, parseSandboxIdLoose } from '../ids.ts';
import { AuditEntry, AuditLogPage, AuditLogQuery } from '../schemas/audit-log.ts';
import { errors } from '../schemas/common.ts';
import { type AuditAction, auditActionOf } from '../services/audit/audit-actions.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The id of what a create made, read from its response for the audit log. */
    auditResourceId?: string;
    /** The trace of the call (OpenTelemetry), for its audit entry. */
    traceId?: string;
  }
}

export async function auditLogRoutes(app: FastifyInstance, s: Services) {
  app.addSchema(AuditEntry);
  app.get<{ Querystring: AuditLogQuery }>(
    '/audit-log',
    {
      onRequest: apiKeyHook(s.auth),
      schema: {
        summary: "The team's audit log, newest first: every call that changed something (needs audit:read, which admins and owners hold)",
        description:
          'Who (key, user), what (action, resource), when, from where (address, user agent) and the HTTP status; never a request body, secret value or token. ' +
          'Entries are kept SANDPIT_AUDIT_RETENTION_DAYS (default 90) and cannot be changed or deleted through the API.',
        tags: ['audit'],
        querystring: AuditLogQuery,
        response: { 200: AuditLogPage, ...errors(400, 401, 403) },
      },
    },
    async (req) => {
      const p = principal(req);
      s.auth.require(p, 'audit:read');
      const page = await s.audit.list(p, req.query);
      return { entries: page.items, ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}) };
    },
  );
}

/**
 * Records every call that changes something once its response is sent: the caller waits for
 * nothing. A call nobody could be identified for (no valid key or token) has no team to show it to.
 */
export function auditTrail(app: FastifyInstance, s: Services): void {
  // Declared, so setting them leaves every request object of one shape.
  app.decorateRequest('auditResourceId', undefined);
  app.decorateRequest('traceId', undefined);
  const region = s.config.region;
  // On a node the caller's address is the one its API replica forwarded.
  const forwarded = s.config.cluster.role === 'node';
  app.addHook('onSend', async (req, reply, payload) => {
    if (reply.statusCode < 300 && typeof payload === 'string' && auditActionOf(req.method, req.routeOptions.url)?.id === 'response') {
      try {
        const body = JSON.parse(payload) as { id?: unknown; member?: { user_id?: unknown } };
        const id = body.id ?? body.member?.user_id;
        if (typeof id === 'string') req.auditResourceId = id;
      } catch {
        // Not JSON: no id to record.
      }
    }
    return payload;
  });
  const record = (req: FastifyRequest, a: AuditAction, status: number) => {
    const p = req.principal;
    const sandbox = req.dataPlaneSandbox;
    const teamId = p?.teamId ?? sandbox?.teamId;
    if (!teamId) return;
    const ua = req.headers['user-agent'];
    const xff = forwarded ? req.headers['x-forwarded-for'] : undefined;
    s.audit.record({
      teamId,
      actorType: p ? (req.headers['x-api-key'] === undefined ? 'console_session' : 'api_key') : 'access_token',
      keyId: p?.keyId ?? null,
      userId: p?.userId ?? null,
      action: a.action,
      resourceType: a.resourceType,
      resourceId: resourceIdOf(req, a, region),
      method: req.method,
      route: req.routeOptions.url ?? '',
      status,
      ip: (typeof xff === 'string' ? xff.split(',')[0]!.trim() : undefined) || req.ip,
      userAgent: typeof ua === 'string' ? ua.slice(0, 512) : null,
      traceId: req.traceId ?? null,
    });
  };
  app.addHook('onResponse', async (req, reply) => {
    const a = auditActionOf(req.method, req.routeOptions.url);
    if (a) record(req, a, reply.statusCode);
  });
  // A WebSocket upgrade (a terminal opened) is hijacked, so it has no onResponse: it is recorded after the
  // route's own checks passed (its last preHandler), as it is accepted.
  app.addHook('onRoute', (route) => {
    if (!(route as { websocket?: boolean }).websocket) return;
    const own = route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
    route.preHandler = [
      ...own,
      async (req: FastifyRequest) => {
        const a = auditActionOf(req.method, req.routeOptions.url);
        if (a && (req as { ws?: boolean }).ws) record(req, a, 101);
      },
    ];
  });
}

function resourceIdOf(req: FastifyRequest, a: AuditAction, region: string): string | null {
  if (a.id === 'none') return null;
  if (a.id === 'response') return req.auditResourceId ?? null;
  if (a.id === 'sandbox') return req.dataPlaneSandbox ? taggedSandboxId(req.dataPlaneSandbox.region, req.dataPlaneSandbox.id) : null;
  const raw = (req.params as Record<string, string> | undefined)?.[a.id.param];
  if (raw === undefined) return null;
  if (a.id.param !== 'sandbox_id') return raw.slice(0, 256);
  const id = parseSandboxIdLoose(raw);
  return id ? taggedSandboxId(id.region ?? region, id.id) : raw.slice(0, 256);
}
