import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { errors } from '../schemas/common.ts';
import { CreateWebhookBody, DeliveriesQuery, DeliveryList, PatchWebhookBody, Webhook, WebhookDelivery, WebhookIdParam, WebhookWithSecret } from '../schemas/webhook.ts';
import { deliveryView, webhookView } from '../services/webhooks/webhooks.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

const SIGNING =
  'Each delivery is a POST of `{"id", "type", "time", "team_id", "data"}` (data: the resource as the API shows it) with `X-Sandpit-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the secret>`, ' +
  'X-Sandpit-Event-Id, X-Sandpit-Event-Type and X-Sandpit-Delivery-Id; any 2xx within 10 s is success, anything else is retried with exponential backoff for 24 h, in order per sandbox; redirects are not followed (docs/observability.md).';

export async function webhookRoutes(app: FastifyInstance, s: Services) {
  app.addSchema(Webhook);
  app.addSchema(WebhookDelivery);
  const onRequest = apiKeyHook(s.auth);
  const manage = (req: FastifyRequest) => {
    const p = principal(req);
    s.auth.require(p, 'webhooks:manage');
    return p;
  };
  const tags = ['webhooks'];

  app.post<{ Body: CreateWebhookBody }>(
    '/webhooks',
    {
      onRequest,
      schema: {
        summary: 'Register an endpoint for lifecycle events (needs webhooks:manage)',
        description: SIGNING,
        tags,
        body: CreateWebhookBody,
        response: { 201: WebhookWithSecret, ...errors(400, 401, 403, 409) },
      },
    },
    async (req, reply) => {
      const { webhook, secret } = await s.webhooks.create(manage(req), req.body);
      reply.code(201).header('cache-control', 'no-store');
      return { ...webhookView(webhook), secret };
    },
  );

  app.get(
    '/webhooks',
    { onRequest, schema: { summary: "The team's webhook endpoints", tags, response: { 200: Type.Object({ webhooks: Type.Array(Type.Ref('Webhook')) }), ...errors(401, 403) } } },
    async (req) => ({
      webhooks: (await s.webhooks.list(manage(req))).map(webhookView),
    }),
  );

  app.get<{ Params: WebhookIdParam }>(
    '/webhooks/:webhook_id',
    { onRequest, schema: { summary: 'A webhook endpoint', tags, params: WebhookIdParam, response: { 200: Type.Ref('Webhook'), ...errors(401, 403, 404) } } },
    async (req) => webhookView(await s.webhooks.get(manage(req), req.params.webhook_id)),
  );

  app.patch<{ Params: WebhookIdParam; Body: PatchWebhookBody }>(
    '/webhooks/:webhook_id',
    {
      onRequest,
      schema: {
        summary: 'Change the URL, events, secret, description or active flag',
        tags,
        params: WebhookIdParam,
        body: PatchWebhookBody,
        response: { 200: Type.Ref('Webhook'), ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => webhookView(await s.webhooks.patch(manage(req), req.params.webhook_id, req.body)),
  );

  app.delete<{ Params: WebhookIdParam }>(
    '/webhooks/:webhook_id',
    {
      onRequest,
      schema: { summary: 'Remove an endpoint; its queued deliveries are dropped', tags, params: WebhookIdParam, response: { 204: Type.Null(), ...errors(401, 403, 404) } },
    },
    async (req, reply) => {
      await s.webhooks.delete(manage(req), req.params.webhook_id);
      reply.code(204);
    },
  );

  app.post<{ Params: WebhookIdParam }>(
    '/webhooks/:webhook_id/test',
    {
      onRequest,
      schema: {
        summary: 'Queue a webhook.test delivery to the endpoint now (signed and retried like any other); follow it in the deliveries',
        tags,
        params: WebhookIdParam,
        response: { 202: Type.Ref('WebhookDelivery'), ...errors(401, 403, 404) },
      },
    },
    async (req, reply) => {
      reply.code(202);
      return deliveryView(await s.webhooks.test(manage(req), req.params.webhook_id));
    },
  );

  app.get<{ Params: WebhookIdParam; Querystring: DeliveriesQuery }>(
    '/webhooks/:webhook_id/deliveries',
    {
      onRequest,
      schema: {
        summary: "An endpoint's deliveries, newest first: status, attempts, the status codes answered",
        description: 'Settled deliveries are kept 30 days.',
        tags,
        params: WebhookIdParam,
        querystring: DeliveriesQuery,
        response: { 200: DeliveryList, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const page = await s.webhooks.deliveries(manage(req), req.params.webhook_id, req.query);
      return { deliveries: page.items.map(deliveryView), ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}) };
    },
  );
}
