import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { SANDBOX_HOST } from '../ids.ts';
import type { SandboxRecord } from '../store/sandboxes.ts';
import type { Services } from './context.ts';

declare module 'fastify' {
  interface FastifyRequest {
    dataPlaneSandbox?: SandboxRecord;
  }
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * onRequest hook of every data-plane route: the sandbox comes from the per-sandbox host name or
 * X-Platform-Sandbox-Id, and X-Access-Token must be its token. Runs before body parsing, so a bad
 * token is 401 whatever the body. `query: true` (WebSocket routes, which browsers cannot give
 * headers) also accepts `access_token` and `sandbox_id` query parameters.
 */
export function dataPlaneHook(s: Services, opts: { query?: boolean } = {}) {
  return async (req: FastifyRequest) => {
    // Read from the URL: this hook serves routes of every query schema, so req.query has no one type here.
    const params = opts.query ? new URL(req.url, 'http://localhost').searchParams : undefined;
    const q = (name: string): string | undefined => params?.get(name) ?? undefined;
    const fromHost = SANDBOX_HOST.exec(req.hostname)?.[1];
    req.dataPlaneSandbox = await s.sandboxes.getWithToken(fromHost ?? header(req, 'x-platform-sandbox-id') ?? q('sandbox_id'), header(req, 'x-access-token') ?? q('access_token'));
  };
}

export const dataPlaneHeaders = Type.Object({
  'x-access-token': Type.Optional(Type.String()),
  'x-platform-sandbox-id': Type.Optional(Type.String({ description: 'Not needed on the per-sandbox host' })),
});

/** The sandbox the data-plane hook resolved. */
export function dataPlaneSandbox(req: FastifyRequest): SandboxRecord {
  if (!req.dataPlaneSandbox) throw new Error('route is missing the data-plane hook');
  return req.dataPlaneSandbox;
}
