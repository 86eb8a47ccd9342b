import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { loadConfig } from '../config.ts';
import { teardownEngine } from '../teardown.ts';
import { InternalChannel } from '../cluster/internal-channel.ts';
import { type CertHolder, ClusterCerts, OPERATOR } from './cluster-certs.ts';
import { answersInfo, type DrainResult, InternalApi, type NodeAction, type NodeView } from './internal-api.ts';
import { MEMBER_SETTINGS, planCluster } from './plan.ts';
import { createDatabase, PostgresCluster } from './postgres.ts';
import { launch, type ProcessRef, running, signal, sleep, terminate } from './processes.ts';
import { type ClusterState, claim, load, type MemberState, save, stateFile } from './state.ts';

export interface ClusterUpOptions {
  /** Holds the state file, logs, PostgreSQL and every member's data directory; made if absent. */
  dir: string;
  /** Default: one region, `local`. */
  regions?: string[];
  /** Default 2. */
  apisPerRegion?: number;
  /** Default 2. */
  nodesPerRegion?: number;
  /** Settings for every member over this process's environment (say SANDPIT_DRIVER); the cluster's own settings override both. */
  env?: NodeJS.ProcessEnv;
  /** The shared template cache. Default: what this environment's SANDPIT_IMAGE_DIR / data dir name. */
  imageDir?: string;
  /** PostgreSQL with fsync and synchronous commit (default); off for a throwaway cluster in a test. */
  durable?: boolean;
  /** How long `up` waits for every API and node. Default 10 minutes. */
  readyTimeoutMs?: number;
  /** One line per step, for a person watching. */
  onProgress?: (line: string) => void;
  /** Stops the start (Ctrl-C): `up` then removes what it started and rejects. */
  signal?: AbortSignal;
}

/** `cluster up --json`: what a client needs (decisions.md, "Regions and hosts"). */
export interface ClusterSummary {
  api_key: string;
  regions: { name: string; api_urls: string[]; nodes: string[] }[];
}

export interface ApiStatus {
  name: string;
  url: string;
  pid: number | null;
  running: boolean;
  /** Answers GET /info. */
  up: boolean;
}

/** A node as its process and the API see it; `state` is `unknown` when no API of its region answers or it never registered. */
export interface NodeStatus extends Partial<Omit<NodeView, 'state' | 'id'>> {
  id: string;
  url: string;
  pid: number | null;
  running: boolean;
  state: NodeView['state'] | 'unknown';
}

export interface ClusterStatus {
  dir: string;
  regions: { name: string; apis: ApiStatus[]; nodes: NodeStatus[] }[];
}

const DATABASE = 'sandpit';
/** A member gets this long to shut down on SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 20_000;
const READY_TIMEOUT_MS = 600_000;

/**
 * A whole Sandpit installation on one machine: PostgreSQL, API replicas and nodes per region, each
 * member its own detached `sandpit serve` process with its own data directory, port, address pool
 * and log. The state file in the directory lets another process (`cluster down`, `status`) find it.
 */
export class LocalCluster {
  readonly state: ClusterState;
  /** The cluster CA and every member's certificate (internal mutual TLS). */
  readonly certs: ClusterCerts;
  #internal: InternalApi | undefined;

  private constructor(state: ClusterState) {
    this.state = state;
    this.certs = new ClusterCerts(certsDir(state.dir));
  }

  /** The operator's calls to API replicas' internal listeners, with the operator's certificate (read again at each rotation). */
  async #api(): Promise<InternalApi> {
    this.#internal ??= new InternalApi(this.state.clusterKey, await InternalChannel.tls(this.certs.files(OPERATOR)));
    return this.#internal;
  }

  /** Lets go of the operator's connections (the cluster keeps running). */
  close(): void {
    this.#internal?.close();
    this.#internal = undefined;
  }

  /** Every member as its certificate names it, with the port of its TLS listener. */
  #certHolders(): CertHolder[] {
    return this.members.map((m) => ({ name: m.name, role: m.role, tlsPort: m.role === 'api' ? m.internalPort : m.port }));
  }

  /**
   * New certificates for every member and the operator (`newCa`: from a new cluster CA, which
   * replaces the old one) while the cluster runs: no connection between members is refused on the way.
   */
  async rotateCertificates(opts: { newCa?: boolean; onProgress?: (line: string) => void } = {}): Promise<void> {
    await this.certs.rotate(this.#certHolders(), opts);
  }

  get dir(): string {
    return this.state.dir;
  }

  get apiKey(): string {
    return this.state.apiKey;
  }

  get members(): MemberState[] {
    return this.state.regions.flatMap((r) => [...r.apis, ...r.nodes]);
  }

  /** A member by name (a node's name is its id). */
  member(name: string): MemberState {
    const m = this.members.find((x) => x.name === name);
    if (!m) throw new Error(`no member ${name} in the cluster of ${this.dir} (members: ${this.members.map((x) => x.name).join(', ')})`);
    return m;
  }

  summary(): ClusterSummary {
    return {
      api_key: this.apiKey,
      regions: this.state.regions.map((r) => ({ name: r.name, api_urls: r.apis.map((a) => a.url), nodes: r.nodes.map((n) => n.name) })),
    };
  }

  /** Starts a cluster and waits until every API answers and every node is ready; on failure, removes what it started. */
  static async up(opts: ClusterUpOptions): Promise<LocalCluster> {
    const dir = resolve(opts.dir);
    const env = { ...process.env, ...opts.env };
    const progress = opts.onProgress ?? (() => undefined);
    await mkdir(dir, { recursive: true });
    // `down` removes what a cluster made here: never a directory that held something else.
    if (!existsSync(stateFile(dir)) && (await readdir(dir)).length > 0) throw new Error(`${dir} is not empty: a cluster needs a directory of its own`);
    await claim(dir);
    // Traversable: PostgreSQL runs as its own user in a subdirectory.
    await chmod(dir, 0o711);
    try {
      progress(`starting PostgreSQL in ${join(dir, 'postgres')}`);
      const durable = opts.durable ?? true;
      const postgres = await PostgresCluster.start({ dir: join(dir, 'postgres'), durable });
      const database = await createDatabase(postgres.adminUrl, DATABASE);
      const regions = opts.regions ?? ['local'];
      const apisPerRegion = opts.apisPerRegion ?? 2;
      const nodesPerRegion = opts.nodesPerRegion ?? 2;
      const keys = { apiKey: `sp_${randomBytes(24).toString('hex')}`, clusterKey: randomBytes(32).toString('hex') };
      const certs = new ClusterCerts(certsDir(dir));
      const apiCount = regions.length * apisPerRegion;
      const ports = await freePorts(apiCount * 2 + regions.length * nodesPerRegion);
      const plans = planCluster({
        dir,
        regions,
        apisPerRegion,
        nodesPerRegion,
        ports: ports.slice(apiCount),
        internalPorts: ports.slice(0, apiCount),
        tls: (name) => certs.files(name),
        databaseUrl: database.url,
        ...keys,
        secretsKey: randomBytes(32).toString('hex'),
        imageDir: opts.imageDir ?? loadConfig(env).imageDir,
      });
      const cluster = new LocalCluster({
        dir,
        createdAt: new Date().toISOString(),
        env: Object.fromEntries(Object.entries(opts.env ?? {}).filter((e): e is [string, string] => e[1] !== undefined)),
        ...keys,
        postgres: { dir: postgres.dir, databaseUrl: database.url, durable },
        regions: plans,
      });
      await save(cluster.state);
      progress(`issuing the cluster CA and members' certificates in ${certs.dir}`);
      await certs.create(cluster.#certHolders());
      const deadline = Date.now() + (opts.readyTimeoutMs ?? READY_TIMEOUT_MS);
      const base = inheritable(env);
      // The first API alone: it migrates the empty database and creates the team of the API key.
      // Then all others at once (a node fails over to its region's next API until that one is up).
      const [first, ...apis] = cluster.state.regions.flatMap((r) => r.apis);
      progress(`starting the first API replica (${first!.url})`);
      opts.signal?.throwIfAborted();
      await cluster.#start(first!, base);
      await cluster.#waitReady([first!], deadline, opts.signal);
      const rest = [...apis, ...cluster.state.regions.flatMap((r) => r.nodes)];
      progress(`starting ${rest.map((m) => `${m.name} (${m.url})`).join(', ')}`);
      opts.signal?.throwIfAborted();
      for (const m of rest) await cluster.#start(m, base);
      await cluster.#waitReady(rest, deadline, opts.signal);
      return cluster;
    } catch (err) {
      await LocalCluster.down(dir).catch(() => undefined);
      throw err;
    }
  }

  /** The cluster a state file in `dir` describes. */
  static async open(dir: string): Promise<LocalCluster> {
    const state = await load(resolve(dir));
    if (!state?.regions) throw new Error(`no cluster in ${resolve(dir)} (start one with sandpit cluster up)`);
    return new LocalCluster(state as ClusterState);
  }

  /**
   * Stops every member by PID (SIGTERM, SIGKILL after a grace), destroys what each left on the host
   * (sandboxes, layer stores, loop devices, namespaces, nft tables, as `sandpit down --all` does),
   * stops PostgreSQL and removes what the cluster made in the directory (and the directory, once
   * empty). Also finishes an `up` that was interrupted. False when there is no cluster there.
   */
  static async down(dir: string, opts: { onProgress?: (line: string) => void } = {}): Promise<boolean> {
    const root = resolve(dir);
    const progress = opts.onProgress ?? (() => undefined);
    const state = await load(root);
    if (state === undefined && !existsSync(join(root, 'postgres'))) return false;
    const members = (state?.regions ?? []).flatMap((r) => [...r.apis, ...r.nodes]);
    const started = members.filter((m): m is MemberState & { process: ProcessRef } => m.process !== undefined);
    progress(`stopping ${started.length} processes`);
    const stopped = await Promise.allSettled(started.map((m) => terminate(m.process, STOP_GRACE_MS)));
    // A member that would not die keeps the state file, so a later `down` tries again.
    const stuck = stopped.find((r) => r.status === 'rejected');
    if (stuck) throw (stuck as PromiseRejectedResult).reason;
    for (const m of members) {
      if (!existsSync(m.dataDir)) continue;
      progress(`releasing what ${m.name} holds on the host`);
      await teardownEngine(loadConfig(m.env));
    }
    if (existsSync(join(root, 'postgres'))) {
      progress('stopping PostgreSQL');
      await (await PostgresCluster.open(join(root, 'postgres'))).stop();
    }
    for (const path of [...members.map((m) => m.dataDir), join(root, 'logs'), certsDir(root), stateFile(root)]) await rm(path, { recursive: true, force: true });
    await rmdir(root).catch(() => undefined);
    return true;
  }

  /** Stops and removes this cluster (see the static `down`). */
  async down(): Promise<void> {
    this.close();
    await LocalCluster.down(this.dir);
  }

  /** The cluster's PostgreSQL, to halt and resume it (a store outage in tests). */
  postgres(): Promise<PostgresCluster> {
    return PostgresCluster.open(this.state.postgres.dir, { durable: this.state.postgres.durable });
  }

  /** Which APIs answer, and every node with its capacity and load as the API of its region reports it. */
  async status(): Promise<ClusterStatus> {
    const regions = await Promise.all(
      this.state.regions.map(async (r) => {
        const apis = await Promise.all(
          r.apis.map(async (a) => ({ name: a.name, url: a.url, pid: a.process?.pid ?? null, running: a.process ? running(a.process) : false, up: await answersInfo(a.url) })),
        );
        const views = await this.#nodeViews(
          r.apis.filter((_, i) => apis[i]!.up).map((a) => a.internalUrl!),
          true,
        );
        const nodes = r.nodes.map((n): NodeStatus => {
          const view = views.get(n.name);
          return {
            ...view,
            id: n.name,
            url: n.url,
            pid: n.process?.pid ?? null,
            running: n.process ? running(n.process) : false,
            state: view?.state ?? 'unknown',
          };
        });
        return { name: r.name, apis, nodes };
      }),
    );
    return { dir: this.dir, regions };
  }

  /** Cordons, uncordons or drains a node through an API of its region. */
  async nodeAction(nodeId: string, action: NodeAction): Promise<DrainResult | undefined> {
    const node = this.member(nodeId);
    if (node.role !== 'node') throw new Error(`${nodeId} is not a node`);
    const region = this.state.regions.find((r) => r.name === node.region)!;
    return (await this.#api()).actOnAny(
      region.apis.map((a) => a.internalUrl!),
      nodeId,
      action,
    );
  }

  /** Signals a member (SIGKILL: a crash, for tests of node or replica loss); `restart` starts it again. */
  kill(name: string, sig: NodeJS.Signals = 'SIGKILL'): void {
    const m = this.member(name);
    if (m.process) signal(m.process, sig);
  }

  /** Stops a member (SIGTERM, SIGKILL after a grace) without touching its data. */
  async stop(name: string): Promise<void> {
    const m = this.member(name);
    if (m.process) await terminate(m.process, STOP_GRACE_MS);
  }

  /** Starts a member that is not running with its saved settings (and `up`'s `env`, then `opts.env`), and waits until it is ready. */
  async restart(name: string, opts: { env?: NodeJS.ProcessEnv; readyTimeoutMs?: number } = {}): Promise<void> {
    const m = this.member(name);
    if (m.process && running(m.process)) throw new Error(`${name} still runs (pid ${m.process.pid})`);
    await this.#start(m, inheritable({ ...process.env, ...this.state.env, ...opts.env }));
    await this.#waitReady([m], Date.now() + (opts.readyTimeoutMs ?? READY_TIMEOUT_MS));
  }

  async #start(m: MemberState, base: NodeJS.ProcessEnv): Promise<void> {
    await mkdir(m.dataDir, { recursive: true });
    // Members share one machine: no warm pool unless the launching shell asks for one.
    m.process = await launch({ SANDPIT_WARM_POOL: '0', ...base, ...m.env }, m.log);
    await save(this.state);
  }

  /** Nodes by id from the first API that answers. */
  /** `sandboxes`: with each node's live sandboxes (status), not while waiting for readiness. */
  async #nodeViews(apiUrls: string[], sandboxes = false): Promise<Map<string, NodeView>> {
    for (const url of apiUrls) {
      try {
        return new Map((await (await this.#api()).nodes(url, { sandboxes })).map((n) => [n.id, n]));
      } catch {
        // the next API of the region
      }
    }
    return new Map();
  }

  /** Until every API answers /info and every node is `ready` at an API of its region; a member that exits fails it. */
  async #waitReady(members: MemberState[], deadline: number, signal?: AbortSignal): Promise<void> {
    const pending = new Set(members);
    for (;;) {
      signal?.throwIfAborted();
      for (const m of pending) {
        if (!m.process || !running(m.process)) throw new Error(`${m.name} exited while starting; the end of ${m.log}:\n${await tail(m.log)}`);
        if (m.role === 'api' && (await answersInfo(m.url))) pending.delete(m);
      }
      const nodes = [...pending].filter((m) => m.role === 'node');
      for (const region of new Set(nodes.map((n) => n.region))) {
        const apis = this.state.regions.find((r) => r.name === region)!.apis.map((a) => a.internalUrl!);
        const views = await this.#nodeViews(apis);
        for (const n of nodes) if (n.region === region && views.get(n.name)?.state === 'ready') pending.delete(n);
      }
      if (pending.size === 0) return;
      if (Date.now() > deadline) {
        const names = [...pending].map((m) => m.name).join(', ');
        throw new Error(`not ready in time: ${names}; the end of ${[...pending][0]!.log}:\n${await tail([...pending][0]!.log)}`);
      }
      await sleep(250);
    }
  }
}

/** The launching environment without the settings each member gets from the cluster. */
function inheritable(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const name of MEMBER_SETTINGS) delete out[name];
  return out;
}

/** `count` distinct free loopback ports (all held open together, so none is handed out twice). */
async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const srv = createServer();
      servers.push(srv);
      ports.push(
        await new Promise<number>((res, rej) => {
          srv.once('error', rej);
          srv.listen(0, '127.0.0.1', () => {
            const addr = srv.address();
            res(typeof addr === 'object' && addr ? addr.port : 0);
          });
        }),
      );
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

/** Where a cluster keeps its CA and certificates. */
const certsDir = (dir: string) => join(dir, 'tls');

async function tail(log: string, lines = 30): Promise<string> {
  const text = await readFile(log, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
