import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { ContainerDriver } from './container/container-driver.ts';
import type { RuntimeDriver } from './driver.ts';
import { GvisorDriver } from './gvisor/gvisor-driver.ts';

/**
 * Picks and initializes the runtime driver the configuration asks for. `auto`
 * takes gvisor when runsc can run a sandbox here (probed once, about 200 ms):
 * it isolates more and pauses to disk; otherwise the container driver.
 */
export async function createDriver(config: Config, log: Logger): Promise<RuntimeDriver> {
  if (config.driver !== 'container') {
    const ok = await GvisorDriver.available();
    if (ok === true) {
      const driver = new GvisorDriver({ dataDir: config.dataDir, agentBinary: config.agentBinary, logger: log });
      await driver.init();
      return driver;
    }
    if (config.driver === 'gvisor') throw new Error(`the gvisor driver cannot run here: ${ok}`);
    log.info(`gvisor is not usable here (${ok}); using the container driver`);
  }
  const ok = await ContainerDriver.available();
  if (ok !== true) throw new Error(`the container driver cannot run here: ${ok === false ? 'crun or cgroups missing' : ok}`);
  const driver = new ContainerDriver({ dataDir: config.dataDir, agentBinary: config.agentBinary, logger: log });
  await driver.init();
  return driver;
}
