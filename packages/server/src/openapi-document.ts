import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { PlatformConnections } from './services/sandboxes/platform-connections.ts';

/**
 * The OpenAPI document the server serves at /openapi.json, built without a
 * store or driver: routes reach services only at request time, so stubs
 * stand in for everything except the configuration the routes read while
 * registering.
 */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  const services = { config: loadConfig({}), driverName: 'none', connections: new PlatformConnections() };
  const app = await buildApp(services as never, createLogger('silent'));
  try {
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}
