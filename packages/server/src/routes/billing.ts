import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { BillingPeriod, BillingPeriodList, BillingSummary, PeriodQuery, PricedResourceLine, ResourceLine, SandboxUsageList, TeamBillingUsage } from '../schemas/billing.ts';
import { errors } from '../schemas/common.ts';
import { TeamParams } from '../schemas/team.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

const TEAM_DOC =
  "Needs billing:read. Any team id other than the caller's answers 403 `forbidden`, whether or not that team exists. " +
  'Usage is metered from sandbox lifecycle events: vCPU and memory while a sandbox is active, disk size (sampled) from creation to deletion. ' +
  'Periods are calendar months in UTC: `open` while current, `finalized` (totals frozen) once rolled over.';

export async function billingRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  const tags = ['billing'];
  app.addSchema(ResourceLine);
  app.addSchema(PricedResourceLine);
  app.addSchema(BillingSummary);
  app.addSchema(TeamBillingUsage);
  app.addSchema(BillingPeriod);

  app.get(
    '/billing/summary',
    {
      onRequest,
      schema: {
        summary: "Charges, credits and usage of the calling team's current billing period",
        description:
          "The team is the API key's. Needs billing:read and the tenant_usage_dashboard rollout gate (on unless the operator disabled it for the team); 403 `forbidden` otherwise. " +
          "Shadow mode: charges are computed at the team's current plan rates, credits come from the local trial grant, nothing is collected.",
        tags,
        response: { 200: Type.Ref('BillingSummary'), ...errors(401, 403) },
      },
    },
    async (req) => s.billing.summary(principal(req)),
  );

  app.get<{ Params: TeamParams; Querystring: PeriodQuery }>(
    '/teams/:team_id/billing/usage',
    {
      onRequest,
      schema: {
        summary: 'Usage of one billing period (default: the current one)',
        description: `${TEAM_DOC} Select a period with ?period_id=<period_id from /billing/periods>; 404 when the team has no such period.`,
        tags,
        params: TeamParams,
        querystring: PeriodQuery,
        response: { 200: Type.Ref('TeamBillingUsage'), ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => s.billing.usage(principal(req), req.params.team_id, req.query.period_id),
  );

  app.get<{ Params: TeamParams; Querystring: PeriodQuery }>(
    '/teams/:team_id/billing/usage/sandboxes',
    {
      onRequest,
      schema: {
        summary: 'Usage and charge of each sandbox in one billing period (default: the current one)',
        description: `${TEAM_DOC} Charges are at the team's current rates, before credits. Same ?period_id as the usage endpoint.`,
        tags,
        params: TeamParams,
        querystring: PeriodQuery,
        response: { 200: SandboxUsageList, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => s.billing.sandboxUsage(principal(req), req.params.team_id, req.query.period_id),
  );

  app.get<{ Params: TeamParams }>(
    '/teams/:team_id/billing/periods',
    {
      onRequest,
      schema: {
        summary: "The team's persisted billing periods, newest first",
        description: `${TEAM_DOC} Every period since the team's billing account was opened; no paging.`,
        tags,
        params: TeamParams,
        response: { 200: BillingPeriodList, ...errors(401, 403) },
      },
    },
    async (req) => ({ periods: await s.billing.periods(principal(req), req.params.team_id) }),
  );
}
