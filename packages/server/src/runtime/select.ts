import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { ContainerDriver } from './container/container-driver.ts';
import { ensureFastCgroupMigration } from './host/host-checks.ts';
import type { RuntimeDriver } from './driver.ts';
import { DriverSet } from './driver-set.ts';
import { GvisorDriver } from './gvisor/gvisor-driver.ts';

/**
 * Picks and initializes the runtime driver the configuration asks for. `auto`
 * takes gvisor when runsc can run a sandbox here (probed once at start):
 * it isolates more and pauses to disk; otherwise the container driver. Sandboxes
 * the other engine still holds in this data directory stay managed by it.
 */
export async function createDriver(config: Config, log: Logger): Promise<RuntimeDriver> {
  const opts = driverOptions(config, log);
  await ensureFastCgroupMigration();
  const primary = await createPrimary(config, log);
  const others: RuntimeDriver[] = [];
  if (primary.name !== 'container' && holdsSandboxes(join(config.dataDir, 'sandboxes')) && (await ContainerDriver.available()) === true) {
    const d = new ContainerDriver(opts);
    await d.init();
    others.push(d);
  }
  if (primary.name !== 'gvisor' && holdsSandboxes(join(config.dataDir, 'gvisor', 'sandboxes')) && (await GvisorDriver.available(opts)) === true) {
    const d = new GvisorDriver(opts);
    await d.init();
    others.push(d);
  }
  return others.length > 0 ? DriverSet.of(primary, others) : primary;
}

/** What either driver is built with. */
function driverOptions(config: Config, log: Logger) {
  return {
    dataDir: config.dataDir,
    agentBinary: config.agentBinary,
    logger: log,
    idBase: config.containerIdBase,
    runsc: config.runsc,
    runscPlatform: config.runscPlatform,
    checkpointCompression: config.checkpointCompression,
    minEngineCpus: config.gvisorMinCpus,
  };
}

async function createPrimary(config: Config, log: Logger): Promise<RuntimeDriver> {
  const opts = driverOptions(config, log);
  if (config.driver !== 'container') {
    const ok = await GvisorDriver.available(opts);
    if (ok === true) {
      const driver = new GvisorDriver(opts);
      await driver.init();
      return driver;
    }
    if (config.driver === 'gvisor') throw new Error(`the gvisor driver cannot run here: ${ok}`);
    log.warn(`gvisor is not usable here (${ok}); using the container driver`);
  }
  const ok = await ContainerDriver.available();
  if (ok !== true) throw new Error(`the container driver cannot run here: ${ok === false ? 'crun or cgroups missing' : ok}`);
  const driver = new ContainerDriver(opts);
  await driver.init();
  return driver;
}

function holdsSandboxes(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}
