import { join } from 'node:path';
import type { TlsFiles } from '../cluster/internal-channel.ts';
import { intToIp, ipToInt } from '../network/addr.ts';

/** One process of a local cluster: an API replica or a node, with everything needed to start it again. */
export interface Member {
  /** `<region>-api-<n>` or `<region>-node-<n>` (a node's name is its node id). */
  name: string;
  role: 'api' | 'node';
  region: string;
  port: number;
  url: string;
  /** An API replica's internal TLS listener (nodes and the operator call it). */
  internalPort?: number;
  internalUrl?: string;
  dataDir: string;
  log: string;
  /** The cluster's own settings for this process, set over the launching environment. */
  env: Record<string, string>;
}

export interface RegionPlan {
  name: string;
  apis: Member[];
  nodes: Member[];
}

export interface PlanInput {
  dir: string;
  regions: string[];
  apisPerRegion: number;
  nodesPerRegion: number;
  /** One free port per member, APIs of every region first, then nodes. */
  ports: number[];
  /** One more free port per API replica, in the same order: its internal TLS listener. */
  internalPorts: number[];
  /** Each member's certificate files (internal mutual TLS). */
  tls: (name: string) => TlsFiles;
  databaseUrl: string;
  apiKey: string;
  clusterKey: string;
  secretsKey: string;
  imageDir: string;
}

/**
 * Node address pools: a /20 each, counted up from here. Outside the single-host default
 * (100.96.0.0/12), so a cluster and `./sandpit up` on one machine never hand out one address twice;
 * clear of the host's reserved ranges (203.0.113.0/24, 10.255.255.0/24).
 */
const POOL_BASE = '100.112.0.0';
const POOL_SIZE = 4096;
/** The pools left before 100.128.0.0 (the end of the shared address space 100.64.0.0/10). */
export const MAX_NODES = 256;

export function nodePool(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_NODES) throw new Error(`no address pool for node ${index}`);
  return `${intToIp(ipToInt(POOL_BASE)! + index * POOL_SIZE)}/20`;
}

/** Regions as given on the command line: names as SANDPIT_REGION takes them, each once. */
export function parseRegions(raw: string): string[] {
  const regions = raw
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  if (regions.length === 0) throw new Error('name at least one region');
  for (const r of regions) if (!/^[a-z0-9]+$/.test(r)) throw new Error(`a region name is [a-z0-9]+, got '${r}'`);
  if (new Set(regions).size !== regions.length) throw new Error('a region is named twice');
  return regions;
}

/** Where every process of the cluster runs, listens, logs and keeps its data, and the settings it starts with. */
export function planCluster(p: PlanInput): RegionPlan[] {
  if (!Number.isInteger(p.apisPerRegion) || p.apisPerRegion < 1) throw new Error('a region needs at least one API replica');
  if (!Number.isInteger(p.nodesPerRegion) || p.nodesPerRegion < 0) throw new Error('nodes per region: a whole number, 0 or more');
  const nodeCount = p.regions.length * p.nodesPerRegion;
  if (nodeCount > MAX_NODES) throw new Error(`at most ${MAX_NODES} nodes in one cluster`);
  if (p.ports.length !== p.regions.length * (p.apisPerRegion + p.nodesPerRegion)) throw new Error('one port per member');
  if (p.internalPorts.length !== p.regions.length * p.apisPerRegion) throw new Error('one internal port per API replica');
  const ports = [...p.ports];
  const internalPorts = [...p.internalPorts];
  const member = (name: string, role: Member['role'], region: string, port: number, env: Record<string, string>): Member => ({
    name,
    role,
    region,
    port,
    // Nodes serve only members, over mutual TLS.
    url: `${role === 'node' ? 'https' : 'http'}://127.0.0.1:${port}`,
    dataDir: join(p.dir, name),
    log: join(p.dir, 'logs', `${name}.log`),
    env: {
      SANDPIT_ROLE: role,
      SANDPIT_REGION: region,
      HOST: '127.0.0.1',
      PORT: String(port),
      SANDPIT_DATA_DIR: join(p.dir, name),
      SANDPIT_IMAGE_DIR: p.imageDir,
      SANDPIT_DATABASE_URL: p.databaseUrl,
      SANDPIT_CLUSTER_KEY: p.clusterKey,
      SANDPIT_TLS_CA: p.tls(name).ca,
      SANDPIT_TLS_CERT: p.tls(name).cert,
      SANDPIT_TLS_KEY: p.tls(name).key,
      // Secrets written through one replica are read through another: one key for all.
      SANDPIT_SECRETS_KEY: p.secretsKey,
      SANDPIT_E2B_PORT: '0',
      // Members share one machine: no member takes the SSH gateway's port.
      SANDPIT_SSH_PORT: '0',
      ...env,
    },
  });
  const plans = p.regions.map((region) => ({
    name: region,
    apis: Array.from({ length: p.apisPerRegion }, (_, i) => {
      const internalPort = internalPorts.shift()!;
      return {
        ...member(`${region}-api-${i + 1}`, 'api', region, ports.shift()!, { SANDPIT_BOOTSTRAP_API_KEY: p.apiKey, SANDPIT_INTERNAL_PORT: String(internalPort) }),
        internalPort,
        internalUrl: `https://127.0.0.1:${internalPort}`,
      };
    }),
    nodes: [] as Member[],
  }));
  let index = 0;
  for (const plan of plans) {
    const apiUrls = plan.apis.map((a) => a.url);
    const internalUrls = plan.apis.map((a) => a.internalUrl!);
    for (let i = 0; i < p.nodesPerRegion; i++) {
      const port = ports.shift()!;
      const id = `${plan.name}-node-${i + 1}`;
      plan.nodes.push(
        member(id, 'node', plan.name, port, {
          SANDPIT_NODE_ID: id,
          SANDPIT_API_URL: internalUrls.join(','),
          SANDPIT_NODE_URL: `https://127.0.0.1:${port}`,
          SANDPIT_PUBLIC_URL: apiUrls[0] ?? '',
          SANDPIT_NET_POOL: nodePool(index++),
          // Several nodes share one machine: a few spare namespaces each, not a host's worth.
          SANDPIT_NET_WARM: '4',
        }),
      );
    }
  }
  return plans;
}

/** Settings a launching shell may hold that belong to one member only (the CLI's own SANDPIT_API_URL, say): never inherited. */
export const MEMBER_SETTINGS = [
  'SANDPIT_ROLE',
  'SANDPIT_NODE_ID',
  'SANDPIT_API_URL',
  'SANDPIT_NODE_URL',
  'SANDPIT_PUBLIC_URL',
  'SANDPIT_NET_POOL',
  'SANDPIT_BOOTSTRAP_API_KEY',
  'SANDPIT_DATABASE_URL',
  'SANDPIT_CLUSTER_KEY',
  'SANDPIT_TLS_CA',
  'SANDPIT_TLS_CERT',
  'SANDPIT_TLS_KEY',
  'SANDPIT_INTERNAL_PORT',
  'SANDPIT_SECRETS_KEY',
  'SANDPIT_DATA_DIR',
  'SANDPIT_IMAGE_DIR',
  'SANDPIT_REGION',
  'SANDPIT_E2B_PORT',
  'SANDPIT_SSH_PORT',
  'HOST',
  'PORT',
];
