import type { Config } from '../config.ts';
import { createDriver } from './select.ts';

/**
 * Destroys every sandbox the engine holds for a data directory and releases host-wide
 * resources (the layer store mount). For tests and uninstall; the server must be stopped.
 */
export async function teardownEngine(config: Config): Promise<void> {
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined } as never;
  const driver = await createDriver(config, quiet);
  for (const id of await driver.list()) await driver.destroy(id);
  await driver.close({ release: true });
}
