import fastifyCors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/**
 * Lets web pages on the configured origins call the control and data planes (the SDK in a browser).
 * Credentials travel in headers (X-API-Key, X-Access-Token), never cookies, so no origin gains
 * anything it could not do with a key it already holds. The console's session cookie stays same-origin: credentials are
 * never allowed here, nor its X-Sandpit-Console header. Preview hosts are answered before this runs
 * and keep whatever the sandboxed app sends.
 */
export async function allowBrowsers(app: FastifyInstance, origins: string[]): Promise<void> {
  if (origins.length === 0) return;
  await app.register(fastifyCors, {
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'HEAD', 'PUT', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ['content-type', 'x-api-key', 'x-access-token', 'x-platform-sandbox-id'],
    exposedHeaders: ['retry-after'],
    credentials: false,
    maxAge: 600,
  });
}
