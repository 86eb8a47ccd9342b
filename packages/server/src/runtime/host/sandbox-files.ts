import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxSpec } from '../driver.ts';

/**
 * Writes the per-sandbox /etc files straight into the empty upper dir before
 * the overlay is mounted: no bind mounts, no extra processes, and edits made
 * inside the sandbox stay within its disk quota.
 */
export async function writeSandboxEtc(upper: string, spec: SandboxSpec, resolvConf: string | undefined): Promise<void> {
  const etc = join(upper, 'etc');
  await mkdir(etc, { mode: 0o755 });
  const hosts = ['127.0.0.1\tlocalhost', `127.0.1.1\t${spec.hostname}`, '::1\tlocalhost ip6-localhost ip6-loopback', ''].join('\n');
  await Promise.all([
    writeFile(join(etc, 'hostname'), `${spec.hostname}\n`, { mode: 0o644 }),
    writeFile(join(etc, 'hosts'), hosts, { mode: 0o644 }),
    resolvConf === undefined ? undefined : writeFile(join(etc, 'resolv.conf'), resolvConf, { mode: 0o644 }),
  ]);
}
