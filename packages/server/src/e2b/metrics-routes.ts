import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest } from '../errors.ts';
import { e2bCaller } from './caller.ts';
import type { AuthService } from '../services/access/auth.ts';
import type { SandboxMetrics } from '../services/sandboxes/sandbox-metrics.ts';
import type { SandboxService } from '../services/sandboxes/sandboxes.ts';

interface MetricsQuery {
  start?: string;
  end?: string;
}

/** A unix time in seconds, E2B's unit for the metrics window. */
function unixSeconds(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw badRequest(`${name} must be a unix time in seconds`);
  return n * 1000;
}

/** `GET /sandboxes/{id}/metrics`: Sandpit's sampled series (services/sandboxes/sandbox-metrics.ts) as E2B's `SandboxMetric` list. */
export async function metricsRoutes(app: FastifyInstance, deps: { auth: AuthService; sandboxes: SandboxService; sandboxMetrics: SandboxMetrics }) {
  const { auth, sandboxes, sandboxMetrics } = deps;
  const caller = e2bCaller(auth);
  app.get('/sandboxes/:sandboxID/metrics', async (req: FastifyRequest<{ Params: { sandboxID: string }; Querystring: MetricsQuery }>) => {
    const p = await caller(req, 'sandboxes:read');
    const rec = await sandboxes.get(p, req.params.sandboxID);
    // E2B's window is in whole seconds: a point inside the end second belongs to it.
    const start = unixSeconds(req.query.start, 'start') ?? 0;
    const endMs = unixSeconds(req.query.end, 'end');
    const end = endMs === undefined ? Number.POSITIVE_INFINITY : endMs + 999;
    const memTotal = rec.resources.memory_mib * 1024 * 1024;
    const diskTotal = rec.resources.disk_mib * 1024 * 1024;
    return sandboxMetrics
      .series(rec.id, start)
      .filter((pt) => pt.at <= end)
      .map((pt) => ({
        timestamp: new Date(pt.at).toISOString(),
        timestampUnix: Math.floor(pt.at / 1000),
        cpuCount: rec.resources.vcpu_count,
        // E2B's share is of the whole sandbox (0-100), Sandpit's of one CPU.
        cpuUsedPct: pt.cpuPercent === null ? 0 : Math.round((pt.cpuPercent / rec.resources.vcpu_count) * 10) / 10,
        memUsed: pt.memoryBytes,
        memTotal,
        memCache: 0,
        diskUsed: pt.diskBytes,
        diskTotal,
      }));
  });
}
