import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { NetworkSettings } from '../config.ts';

export interface NetworkConfig {
  /** Where the CA, per-slot resolv.conf files and CA bundles live. */
  dir: string;
  pool: string;
  dnsUpstream?: string;
  /** PEM file of extra CAs (an operator's private CAs) trusted by the egress proxy and by every sandbox. */
  upstreamCaFile?: string;
  /** Namespaces kept ready so a create does not wait for one. */
  warm: number;
  /** Names this installation's kernel objects, so installations on one host never touch each other's. */
  installation: string;
  dataDir: string;
}

/** The network settings resolved against this host and data directory. */
export async function networkConfig(settings: NetworkSettings, dataDir: string): Promise<NetworkConfig> {
  await mkdir(dataDir, { recursive: true });
  return {
    dir: join(dataDir, 'network'),
    pool: settings.pool,
    dnsUpstream: settings.dnsUpstream,
    // By default sandboxes trust what the host trusts, so a private registry mirror or proxy CA works inside too.
    upstreamCaFile: settings.upstreamCaFile ?? (existsSync(HOST_CA_BUNDLE) ? HOST_CA_BUNDLE : undefined),
    warm: settings.warm,
    installation: createHash('sha256')
      .update(await realpath(dataDir))
      .digest('hex')
      .slice(0, 8),
    dataDir: await realpath(dataDir),
  };
}

const HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
