import type { FastifyInstance } from 'fastify';
import { badRequest } from '../errors.ts';
import { errors, SandboxIdParam } from '../schemas/common.ts';
import { EventsQuery, MetricsQuery, SandboxEventList, SandboxMetricsResponse } from '../schemas/sandbox-observability.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

const tags = ['sandboxes'];

/** Per-sandbox metrics (sampled time series) and lifecycle events with reasons. */
export async function sandboxObservabilityRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);

  app.get<{ Params: SandboxIdParam; Querystring: MetricsQuery }>(
    '/sandboxes/:sandbox_id/metrics',
    {
      onRequest,
      schema: {
        summary: 'CPU, memory, disk and network use over time, sampled from the engine cgroups and the sandbox veth',
        tags,
        params: SandboxIdParam,
        querystring: MetricsQuery,
        response: { 200: SandboxMetricsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const p = principal(req);
      s.auth.require(p, 'sandboxes:read');
      const rec = await s.sandboxes.get(p, req.params.sandbox_id);
      const raw = req.query.since;
      const since = raw === undefined ? 0 : Date.parse(raw);
      if (Number.isNaN(since)) throw badRequest(`'since' is not a date-time: '${raw}'`);
      const m = s.sandboxMetrics;
      return {
        sandbox_id: req.params.sandbox_id,
        interval_ms: m.deps.intervalMs,
        window_ms: m.deps.windowMs,
        resources: rec.resources,
        points: m.series(rec.id, since).map((pt) => ({
          at: new Date(pt.at).toISOString(),
          cpu_percent: pt.cpuPercent,
          memory_bytes: pt.memoryBytes,
          disk_bytes: pt.diskBytes,
          net_rx_bytes: pt.netRxBytes,
          net_tx_bytes: pt.netTxBytes,
          net_rx_rate: pt.netRxRate,
          net_tx_rate: pt.netTxRate,
        })),
      };
    },
  );

  app.get<{ Params: SandboxIdParam; Querystring: EventsQuery }>(
    '/sandboxes/:sandbox_id/events',
    {
      onRequest,
      schema: {
        summary: 'Lifecycle events with reasons (created, paused by auto-pause or request, resumed, snapshot, failed and why), oldest first',
        tags,
        params: SandboxIdParam,
        querystring: EventsQuery,
        response: { 200: SandboxEventList, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const p = principal(req);
      s.auth.require(p, 'sandboxes:read');
      const rec = await s.sandboxes.get(p, req.params.sandbox_id);
      const q = req.query;
      const limit = q.limit === undefined ? 200 : Number(q.limit);
      if (limit < 1 || limit > 1000) throw badRequest('limit must be 1 to 1000');
      return { events: await s.sandboxEvents.list(rec.id, q.after === undefined ? 0 : Number(q.after), limit) };
    },
  );
}
