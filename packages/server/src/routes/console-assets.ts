import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';

/** Everything the console loads comes from this origin; it talks only to the public API. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // xterm.js and uPlot size their elements with inline styles.
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self' ws: wss:",
  "img-src 'self' data: blob:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/** Serves the built web console at /console (a single-page app: unknown paths get index.html). */
export async function consoleAssetRoutes(app: FastifyInstance, dir: string) {
  const built = existsSync(join(dir, 'index.html'));
  app.get('/', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/console/'));
  if (!built) {
    app.get('/console/*', { schema: { hide: true } }, async () => {
      throw new ApiError(503, 'unavailable', 'the console is not built: run `npm run build -w @sandpit/console` (./sandpit up does it)');
    });
    return;
  }
  await app.register(async (scope) => {
    scope.addHook('onSend', async (_req, reply) => {
      reply.header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
    });
    await scope.register(fastifyStatic, {
      root: dir,
      prefix: '/console/',
      wildcard: false,
      preCompressed: true,
      index: ['index.html'],
      // Built asset names carry a content hash: they never change under a name.
      setHeaders: (reply, path) => reply.header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache'),
    });
    // Client-side routes (/console/sandboxes/...) load the app shell; hashed assets are cached for good.
    scope.get('/console/*', { schema: { hide: true } }, async (req, reply) => {
      // A missing asset is a 404, not the app shell (a stale page asking for an old chunk must fail plainly).
      if (req.url.startsWith('/console/assets/')) throw new ApiError(404, 'not_found', `no console asset ${req.url.split('?')[0]}`);
      return reply.header('cache-control', 'no-cache').sendFile('index.html');
    });
  });
}
