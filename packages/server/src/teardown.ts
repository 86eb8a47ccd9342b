import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pMap from 'p-map';
import type { Config } from './config.ts';
import { AddressPool } from './network/addr.ts';
import { purgeInstallation, unregisterInstallation } from './network/slots.ts';
import { networkConfig } from './network/network-config.ts';
import { ContainerDriver } from './runtime/container/container-driver.ts';
import { type RuntimeDriver, TEARDOWN_CONCURRENCY } from './runtime/driver.ts';
import { GvisorDriver } from './runtime/gvisor/gvisor-driver.ts';
import { unmountUnder } from './runtime/host/mounts.ts';
import { volumeDiskPaths } from './runtime/host/volume-disks.ts';

/**
 * Destroys every sandbox any engine holds for a data directory and releases host-wide
 * resources (layer store mounts, network namespaces, nft rules). For tests and uninstall; the server must be stopped.
 */
export async function teardownEngine(config: Config): Promise<void> {
  const opts = { dataDir: config.dataDir, agentBinary: config.agentBinary, runsc: config.runsc, runscPlatform: config.runscPlatform, checkpointCompression: config.checkpointCompression };
  const drivers: RuntimeDriver[] = [];
  if (existsSync(join(config.dataDir, 'crun'))) drivers.push(new ContainerDriver(opts));
  if (existsSync(join(config.dataDir, 'gvisor'))) drivers.push(new GvisorDriver(opts));
  for (const driver of drivers) {
    await (driver as ContainerDriver | GvisorDriver).init();
    await pMap(await driver.list(), (id) => driver.destroy(id), { concurrency: TEARDOWN_CONCURRENCY });
    await driver.close({ release: true });
  }
  // The volume store: unmounted once no sandbox binds a volume (the image file goes with the data dir).
  await unmountUnder(volumeDiskPaths(config.dataDir).mountPoint);
  // A server killed before its shutdown leaves its spare namespaces and nft table behind.
  if (existsSync(config.dataDir)) {
    const net = await networkConfig(config.network, config.dataDir);
    await purgeInstallation(new AddressPool(net.pool), net.installation);
    await unregisterInstallation(net.installation);
  }
}
