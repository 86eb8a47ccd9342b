import { closeSync, constants, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { chmod, chown, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { type BindMount, checkId, checkSpec, type EngineState, type EngineStats, type RuntimeDriver, type SandboxSpec, type WritableLayer } from '../driver.ts';
import { CgroupV1 } from '../host/cgroups.ts';
import { Crun } from './crun.ts';
import { checkAvailable, ensureHugetlbMounted, hardNofileLimit } from '../host/host-checks.ts';
import { KeyedLock } from '../host/keyed-lock.ts';
import { LayerStore, type Logger } from '../host/layer-store.ts';
import { unmountUnder } from '../host/mounts.ts';
import { bindVolumes, mountInto, volumesOuterFirst, volumeTree } from '../host/volume-binds.ts';
import { cpuViewMounts, pinnedCpus } from '../host/cpu-view.ts';
import { type EngineHealth, pidHealth } from '../engine-health.ts';
import { ociConfig } from '../host/oci-config.ts';
import { lowerDirs } from '../host/overlay.ts';
import { DEFAULT_ID_BASE, IdRanges, mountIdmappedOverlay, sandboxUserns } from '../host/idmap.ts';
import { prepareJoinedNetns } from '../host/joined-netns.ts';
import { driverPaths, sandboxPaths, type DriverPaths } from './paths.ts';
import { writeSandboxEtc } from '../host/sandbox-files.ts';
import { exists, readJson, subdirNames } from '../../optional-files.ts';
import { waitForSocket } from './wait-socket.ts';
import { isAlive, readPidFile } from '../host/pids.ts';
import type { LayeredSandboxMeta } from '../host/sandbox-meta.ts';

export interface ContainerDriverOptions {
  dataDir: string;
  /** Static in-sandbox agent, bind-mounted read-only at /.sandpit/agent and run as PID 1. */
  agentBinary: string;
  logger?: Logger;
  /** Apparent size of the sparse btrfs image holding all writable layers (default 256 GiB). */
  layerStoreGiB?: number;
  /** Ready-made writable layers kept for fast creates (default 2; 0 disables). */
  layerPoolSize?: number;
  /** /etc/resolv.conf for each sandbox; absent keeps the template's placeholder. */
  resolvConf?: (spec: SandboxSpec) => string | undefined;
  /** How long create waits for the agent's socket (default 10 s). */
  readyTimeoutMs?: number;
  /** Host uid and gid the first sandbox's root (0) is mapped to; each sandbox takes its own 65536 ids from there up. */
  idBase?: number;
}

/** Built next to the agent (packages/agent): attaches a volume inside a running container. */
const quietLogger: Logger = { info: () => undefined, warn: (m) => console.warn(m) };

/**
 * Sandboxes as crun containers: an overlay root (shared template + own
 * quota-capped layer), cgroup v1 limits, the freezer for pause, and the agent
 * as PID 1. All state is on disk (sandbox dir, layer store, crun root), so the
 * server can die and a new one picks the sandboxes up again.
 */
export class ContainerDriver implements RuntimeDriver {
  readonly name = 'container' as const;
  readonly pauseKeeps = 'ram' as const;

  private readonly opts: ContainerDriverOptions;
  private readonly paths: DriverPaths;
  private readonly logger: Logger;
  private readonly crun: Crun;
  private readonly layers: LayerStore;
  private readonly mutex = new KeyedLock();
  private readonly ids: IdRanges;
  private cgroups: CgroupV1 | undefined;
  private nofile = 1024;

  constructor(opts: ContainerDriverOptions) {
    this.opts = opts;
    this.paths = driverPaths(opts.dataDir);
    this.logger = opts.logger ?? quietLogger;
    this.crun = new Crun(this.paths.crunRoot);
    this.ids = new IdRanges(opts.idBase ?? DEFAULT_ID_BASE);
    this.layers = new LayerStore({
      image: this.paths.layerImage,
      mountPoint: this.paths.layersDir,
      sizeGiB: opts.layerStoreGiB ?? 256,
      poolSize: opts.layerPoolSize ?? 2,
      logger: this.logger,
    });
  }

  /** True when crun and cgroup v1 (with the freezer) are usable here, else the reason they are not. */
  static available(): Promise<boolean | string> {
    return checkAvailable();
  }

  /** Whether sandbox disks are capped (false when the btrfs layer store could not be set up). */
  get diskQuotas(): boolean {
    return this.layers.quotas;
  }

  /** Prepares the crun root, cgroup parents and the layer store; re-mounts them after a host restart. */
  async init(): Promise<void> {
    await Promise.all([mkdir(this.paths.crunRoot, { recursive: true, mode: 0o700 }), mkdir(this.paths.sandboxesDir, { recursive: true, mode: 0o711 })]);
    // crun sets up the root and its mounts as sandbox root (an unprivileged host uid), which must pass through.
    await allowTraversal(this.opts.dataDir);
    await ensureHugetlbMounted();
    const cgroups = await CgroupV1.detect();
    if (!cgroups.controllers.has('freezer')) throw new Error('the cgroup v1 freezer is not mounted');
    await cgroups.prepareParent();
    await this.layers.init();
    // Upper dirs hold sandbox files with their image ids (a set-uid file of sandbox root is set-uid 0 there): host root only.
    await chmod(this.paths.layersDir, 0o700);
    this.nofile = await hardNofileLimit();
    // Sandboxes made before ranges were per sandbox all run in the first one.
    for (const id of await subdirNames(this.paths.sandboxesDir)) {
      const meta = await readJson<LayeredSandboxMeta>(sandboxPaths(this.paths, id).meta);
      this.ids.adopt(id, meta?.idBase ?? this.ids.first);
    }
    this.cgroups = cgroups;
    this.layers.replenish();
  }

  /**
   * Stops background work (layer pool refills) and frees pooled layers;
   * sandboxes keep running. With `release` (tests, uninstall), the layer
   * store is unmounted too, which only succeeds once every sandbox is destroyed.
   */
  async close(opts: { release?: boolean } = {}): Promise<void> {
    await this.layers.close();
    if (!opts.release) return;
    const left = await this.list();
    if (left.length > 0) throw new Error(`cannot unmount the layer store: ${left.length} sandboxes remain`);
    await unmountUnder(this.paths.layersDir);
  }

  agentSocket(id: string): string {
    return sandboxPaths(this.paths, id).socket;
  }

  upperDir(id: string): string {
    return this.layers.upper(id);
  }

  async writableLayer(id: string): Promise<WritableLayer | undefined> {
    checkId(id);
    const meta = await readJson<LayeredSandboxMeta>(sandboxPaths(this.paths, id).meta);
    return meta ? { upper: this.layers.upper(id), lowers: lowerDirs(meta) } : undefined;
  }

  create(spec: SandboxSpec): Promise<void> {
    checkSpec(spec);
    return this.mutex.run(spec.id, () => this.createLocked(spec));
  }

  private async createLocked(spec: SandboxSpec): Promise<void> {
    this.cg();
    const sp = sandboxPaths(this.paths, spec.id);
    if (await exists(sp.dir)) throw new Error(`sandbox ${spec.id} already exists`);
    if (!(await exists(this.opts.agentBinary))) throw new Error(`agent binary ${this.opts.agentBinary} not found`);
    if (!(await exists(spec.templateRoot))) throw new Error(`template root ${spec.templateRoot} not found`);
    const id = spec.id;
    const base = this.ids.acquire(id);
    // Made beside the layer's preparation; only the mount needs it.
    const userns = sandboxUserns(base);
    try {
      // Only host root and sandbox root (its group) pass into the sandbox's dir: other host users
      // must not reach its root (/tmp there is world-writable) nor its agent socket (in runDir, which
      // the agent, as sandbox root, makes it in).
      await mkdir(sp.dir, { mode: 0o710 });
      await chown(sp.dir, 0, base);
      await mkdir(sp.runDir, { mode: 0o700 });
      await chown(sp.runDir, base, base);
      // Independent steps run side by side; crun starts once root and config are in place.
      const { ready, capped } = this.layers.acquire(id, spec.resources.diskMib);
      const layer = ready.then(() => writeSandboxEtc(this.layers.upper(id), spec, this.opts.resolvConf?.(spec)));
      const limited = settleAll([capped, layer] as const).then(([subvolId]) => subvolId);
      const mounted = Promise.all([userns, layer, mkdir(sp.rootfs)]).then(async ([fd]) => {
        await mountIdmappedOverlay(fd, lowerDirs(spec), this.layers.dir(id), sp.rootfs);
        await bindVolumes(fd, sp.rootfs, base, spec.mounts ?? []);
      });
      const sysfs = spec.netnsPath ? sysfsFor(spec.netnsPath, join(sp.dir, 'sys')) : Promise.resolve(undefined);
      const configured = Promise.all([sysfs, cpuViewMounts(sp.dir, pinnedCpus(id, spec.resources.vcpuCount))]).then(([sys, cpuView]) => {
        const config = ociConfig({ spec, rootfs: sp.rootfs, runDir: sp.runDir, agentBinary: this.opts.agentBinary, nofile: this.nofile, idBase: base, sysfs: sys }) as {
          mounts: object[];
        };
        config.mounts.push(...cpuView);
        return writeFile(sp.config, JSON.stringify(config));
      });
      const started = settleAll([mounted, configured]).then(() => this.crun.runDetached(id, sp.bundle, sp.pidFile, sp.log));
      const [subvolId] = await settleAll([limited, started] as const);
      const meta: LayeredSandboxMeta = {
        id,
        templateRoot: spec.templateRoot,
        templateLayers: spec.templateLayers,
        hostname: spec.hostname,
        resources: spec.resources,
        subvolId,
        idBase: base,
        createdAt: new Date().toISOString(),
      };
      const pid = await readPidFile(sp.pidFile);
      await Promise.all([writeFile(sp.meta, JSON.stringify(meta)), waitForSocket(sp.socket, this.opts.readyTimeoutMs ?? 10_000, () => !pid || isAlive(pid))]);
    } catch (err) {
      const log = (await readFile(sp.log, 'utf8').catch(() => '')).trim().split('\n').slice(-5).join('\n');
      await this.destroyLocked(id).catch((e: Error) => this.logger.warn(`cleanup after failed create of ${id}: ${e.message}`));
      throw new Error(`creating sandbox ${id} failed: ${(err as Error).message}${log ? `\n${log}` : ''}`);
    } finally {
      userns.then(closeSync, () => undefined);
      this.layers.replenishSoon();
    }
  }

  /**
   * Mounts volumes into a running sandbox (a pre-started one a create took). Its root is private to
   * the container's mount namespace, so the host makes each volume's idmapped mount and a helper
   * that enters the namespace attaches it there (packages/agent/mount-into.c).
   */
  attachVolumes(id: string, mounts: readonly BindMount[]): Promise<void> {
    checkId(id);
    return this.mutex.run(id, async () => {
      const base = this.ids.baseOf(id);
      if (base === undefined) throw new Error(`sandbox ${id} has no id range`);
      const pid = await readPidFile(sandboxPaths(this.paths, id).pidFile);
      // The container's own namespace maps the same ids as the one its root was mounted with.
      const userns = openSync(`/proc/${pid}/ns/user`, constants.O_RDONLY);
      try {
        for (const m of volumesOuterFirst(mounts)) await mountInto(this.opts.agentBinary, pid, m.destination, base, volumeTree(m, userns));
      } finally {
        closeSync(userns);
      }
    });
  }

  pause(id: string): Promise<void> {
    checkId(id);
    return this.mutex.run(id, async () => {
      const cg = this.cg();
      if ((await cg.freezerState(id)) === undefined) throw new Error(`sandbox ${id} is not running`);
      await cg.freeze(id);
    });
  }

  /** The container's processes end; its layer, mounts, config (with its env) and network stay for resume to run it again. */
  stop(id: string): Promise<void> {
    checkId(id);
    return this.mutex.run(id, async () => {
      const sp = sandboxPaths(this.paths, id);
      if ((await this.crun.state(id))?.status !== 'running') throw new Error(`sandbox ${id} is not running`);
      // Its writes went to the host's page cache as they were made: nothing to flush.
      await writeFile(sp.stopped, '');
      await this.endProcesses(id);
    });
  }

  /** The frozen processes end; resume then runs the container again. */
  dropMemory(id: string): Promise<void> {
    checkId(id);
    return this.mutex.run(id, async () => {
      const sp = sandboxPaths(this.paths, id);
      if (await exists(sp.stopped)) return;
      const frozen = await this.cg().freezerState(id);
      if (frozen !== 'FROZEN' && frozen !== 'FREEZING') throw new Error(`sandbox ${id} is not paused`);
      await writeFile(sp.stopped, '');
      await this.endProcesses(id);
    });
  }

  resume(id: string): Promise<void> {
    checkId(id);
    return this.mutex.run(id, async () => {
      const sp = sandboxPaths(this.paths, id);
      if (await exists(sp.stopped)) return this.bootLocked(id);
      const cg = this.cg();
      if ((await cg.freezerState(id)) === undefined) throw new Error(`sandbox ${id} is not running`);
      await cg.thaw(id);
    });
  }

  /** Runs a stopped sandbox's container again from its bundle; a failed boot leaves it stopped. */
  private async bootLocked(id: string): Promise<void> {
    const sp = sandboxPaths(this.paths, id);
    await rm(sp.socket, { force: true });
    try {
      await this.crun.runDetached(id, sp.bundle, sp.pidFile, sp.log);
      const pid = await readPidFile(sp.pidFile);
      await waitForSocket(sp.socket, this.opts.readyTimeoutMs ?? 10_000, () => !pid || isAlive(pid));
    } catch (err) {
      await this.endProcesses(id);
      throw err;
    }
    await rm(sp.stopped, { force: true });
  }

  destroy(id: string): Promise<void> {
    checkId(id);
    return this.mutex.run(id, () => this.destroyLocked(id));
  }

  /** Every step tolerates what an earlier, interrupted destroy (or a crash) left behind. */
  private async destroyLocked(id: string): Promise<void> {
    const sp = sandboxPaths(this.paths, id);
    await this.endProcesses(id);
    await unmountUnder(sp.dir);
    const meta = await readJson<LayeredSandboxMeta>(sp.meta);
    await this.layers.remove(id, meta?.subvolId);
    await rm(sp.dir, { recursive: true, force: true });
    this.ids.release(id);
  }

  /** Kills every process of the container and deletes it with its cgroups; the layer and mounts stay. */
  private async endProcesses(id: string): Promise<void> {
    const cg = this.cg();
    // SIGKILL while still frozen, then thaw: nothing runs another instruction.
    for (const pid of await cg.procs(id)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    if ((await cg.freezerState(id)) !== undefined) await cg.thaw(id).catch(() => undefined);
    await waitEmpty(cg, id, 3000);
    await this.crun.deleteForce(id);
    await cg.remove(id);
  }

  async state(id: string): Promise<EngineState> {
    checkId(id);
    const cg = this.cg();
    const sp = sandboxPaths(this.paths, id);
    const [cs, frozen, onDisk, inLayers] = await Promise.all([this.crun.state(id), cg.freezerState(id), exists(sp.dir), exists(this.layers.dir(id))]);
    if (cs) {
      if (cs.status === 'paused' || frozen === 'FROZEN' || frozen === 'FREEZING') {
        return cs.status === 'stopped' ? 'stopped' : 'paused';
      }
      return cs.status === 'running' ? 'running' : 'stopped';
    }
    if (await exists(sp.stopped)) return 'paused';
    return onDisk || inLayers ? 'stopped' : 'missing';
  }

  async health(id: string): Promise<EngineHealth> {
    const pid = await readPidFile(sandboxPaths(this.paths, id).pidFile).catch(() => 0);
    return pidHealth(pid > 0 ? pid : undefined, this.cg().dir('memory', id));
  }

  async templatePaths(): Promise<string[]> {
    const paths: string[] = [];
    for (const id of await subdirNames(this.paths.sandboxesDir)) {
      const meta = await readJson<LayeredSandboxMeta>(sandboxPaths(this.paths, id).meta);
      if (meta) paths.push(meta.templateRoot, ...(meta.templateLayers ?? []));
    }
    return paths;
  }

  async list(): Promise<string[]> {
    const [dirs, crunIds, layerIds] = await Promise.all([subdirNames(this.paths.sandboxesDir), this.crun.list(), this.layers.list()]);
    return [...new Set([...dirs, ...crunIds, ...layerIds])].sort();
  }

  async stats(id: string): Promise<EngineStats> {
    checkId(id);
    const cg = this.cg();
    const sp = sandboxPaths(this.paths, id);
    const meta = await readJson<LayeredSandboxMeta>(sp.meta);
    if (!meta && !(await exists(sp.dir))) throw new Error(`sandbox ${id} not found`);
    const [memoryBytes, cpuUsageNs, diskBytes] = await Promise.all([
      cg.readNumber('memory', id, 'memory.usage_in_bytes'),
      cg.readNumber('cpuacct', id, 'cpuacct.usage'),
      this.layers.usage(id, meta?.subvolId),
    ]);
    return { memoryBytes, cpuUsageNs, diskBytes };
  }

  private cg(): CgroupV1 {
    if (!this.cgroups) throw new Error('container driver: call init() first');
    return this.cgroups;
  }
}

/** Readies the network namespace the host made for the sandbox; returns the sysfs mounted for it. */
async function sysfsFor(netnsPath: string, dir: string): Promise<string> {
  await mkdir(dir);
  prepareJoinedNetns(netnsPath, dir);
  return dir;
}

/**
 * Adds search (not read) permission for others to the data dir, as Docker does to its root with user
 * namespaces, and refuses to start when a directory above it, not ours to change, would block crun.
 */
async function allowTraversal(dir: string): Promise<void> {
  const { mode } = await stat(dir);
  if ((mode & 0o001) === 0) await chmod(dir, (mode & 0o7777) | 0o001);
  for (let d = dirname(dir); ; d = dirname(d)) {
    if (((await stat(d)).mode & 0o001) === 0) {
      throw new Error(`sandboxes run as an unprivileged host uid, which cannot pass through ${d} (mode without o+x) to ${dir}: choose another SANDPIT_DATA_DIR or chmod o+x ${d}`);
    }
    if (d === '/') return;
  }
}

async function waitEmpty(cg: CgroupV1, id: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while ((await cg.procs(id)).length > 0 && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Like Promise.all, but waits for every promise to settle before rejecting, so cleanup never races a step. */
async function settleAll<T extends readonly unknown[]>(ps: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const results = await Promise.allSettled(ps);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
