import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { ContainerDriver } from './container/container-driver.ts';
import type { RuntimeDriver } from './driver.ts';

/** Picks and initializes the runtime driver the configuration asks for (`auto`: the best that works here). */
export async function createDriver(config: Config, log: Logger): Promise<RuntimeDriver> {
  if (config.driver === 'gvisor') throw new Error('the gvisor driver is not available in this build yet');
  const ok = await ContainerDriver.available();
  if (ok !== true) throw new Error(`the container driver cannot run here: ${ok === false ? 'crun or cgroups missing' : ok}`);
  const driver = new ContainerDriver({ dataDir: config.dataDir, agentBinary: config.agentBinary, logger: log });
  await driver.init();
  return driver;
}
