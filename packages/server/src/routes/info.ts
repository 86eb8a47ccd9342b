import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errors } from '../schemas/common.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

export const VERSION = '0.1.0';

export async function infoRoutes(app: FastifyInstance, s: Services) {
  const { publicHost, region } = s.config;
  // The bound port, which differs from the configured one when that was 0.
  const port = () => {
    const addr = app.server.address();
    return typeof addr === 'object' && addr ? addr.port : s.config.port;
  };
  app.get(
    '/info',
    {
      schema: {
        summary: 'Discovery: where the data plane, sandbox hosts and previews are',
        tags: ['info'],
        security: [],
        response: {
          200: Type.Object({
            version: Type.String(),
            region: Type.String(),
            regions: Type.Array(Type.Object({ name: Type.String(), api_url: Type.String() }), { description: 'Regions this one knows (itself first); any of them serves any sandbox' }),
            driver: Type.String({ description: 'Runtime driver this host runs sandboxes on' }),
            data_plane_url: Type.String(),
            sandbox_url: Type.String({ description: 'Template with {sandbox_id}' }),
            preview_url: Type.String({ description: 'Template with {port} and {sandbox_id}' }),
            ssh_port: Type.Optional(Type.Integer({ description: 'Port of the SSH gateway (`ssh -p <ssh_port> <sandbox_id>@host`); absent when SANDPIT_SSH_PORT is 0' })),
            e2b_api_url: Type.Optional(Type.String({ description: 'E2B-compatible API (set E2B_API_URL and E2B_SANDBOX_URL to it); absent when SANDPIT_E2B_PORT is 0' })),
            warm_pool: Type.Object(
              { ready: Type.Integer(), target: Type.Integer() },
              { description: 'Pre-started sandboxes waiting for creates, over all templates (per template: GET /templates/{id} warm_pool_ready)' },
            ),
          }),
        },
      },
    },
    async () => ({
      version: VERSION,
      region,
      regions: await s.regions.list(),
      driver: s.driverName,
      data_plane_url: `http://${publicHost}:${port()}`,
      sandbox_url: `http://{sandbox_id}.sandbox.${publicHost}:${port()}`,
      preview_url: `http://{port}-{sandbox_id}.preview.${publicHost}:${port()}`,
      ...(s.sshPort() > 0 ? { ssh_port: s.sshPort() } : {}),
      ...(s.config.e2bPort > 0 ? { e2b_api_url: `http://${publicHost}:${s.config.e2bPort}` } : {}),
      warm_pool: s.warmPool.sizes().reduce((t, p) => ({ ready: t.ready + p.ready, target: t.target + p.target }), { ready: 0, target: 0 }),
    }),
  );

  app.get(
    '/me',
    {
      onRequest: apiKeyHook(s.auth),
      schema: {
        summary: 'The team, user and permissions of the calling API key',
        tags: ['auth'],
        response: {
          200: Type.Object({ team_id: Type.String(), user_id: Type.String(), key_id: Type.String(), permissions: Type.Array(Type.String()) }),
          ...errors(401),
        },
      },
    },
    async (req) => {
      const p = principal(req);
      return { team_id: p.teamId, user_id: p.userId, key_id: p.keyId, permissions: [...p.permissions] };
    },
  );
}
