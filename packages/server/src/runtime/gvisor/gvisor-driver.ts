import { link, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CgroupV1 } from '../host/cgroups.ts';
import { raiseEngineMemory, unpinEngine } from './engine-cgroup.ts';
import { type EngineHealth, pidHealth } from '../engine-health.ts';
import { hardNofileLimit } from '../host/host-checks.ts';
import { KeyedLock } from '../host/keyed-lock.ts';
import { LayerStore, type Logger } from '../host/layer-store.ts';
import { isMountPoint, unmountUnder } from '../host/mounts.ts';
import { ociConfig } from '../host/oci-config.ts';
import { lowerDirs, mountOverlay } from '../host/overlay.ts';
import { writeSandboxEtc } from '../host/sandbox-files.ts';
import {
  type BindMount,
  CaptureRefused,
  checkId,
  checkSpec,
  type EngineState,
  type EngineStats,
  type NetConfig,
  type RuntimeDriver,
  type SandboxSpec,
  type SnapshotEngine,
  type SnapshotFiles,
} from '../driver.ts';
import { AgentChannel } from './agent-channel.ts';
import { freezeLayer, removeTree, thawLayer, treeBytes } from './layer-copies.ts';
import { captureNet, openTcpEndpoints, provisionNet } from './netns.ts';
import { type GvisorPaths, gvisorPaths, gvisorSandboxPaths, sandboxOf, type SnapshotPaths, snapshotPaths } from './paths.ts';
import { moveLegacyImages, settleInterruptedCaptures } from './recovery.ts';
import { probeRunsc, Runsc, type RunscState } from './runsc.ts';
import { isAlive } from '../host/pids.ts';
import { exists, readJson, subdirNames } from '../../optional-files.ts';

export interface GvisorDriverOptions {
  dataDir: string;
  /** Static in-sandbox agent, bind-mounted read-only at /.sandpit/agent and run as PID 1. */
  agentBinary: string;
  logger?: Logger;
  /** Apparent size of the sparse btrfs image holding writable layers, checkpoints and snapshots (default 256 GiB). */
  layerStoreGiB?: number;
  /** Ready-made writable layers kept for fast creates (default 2; 0 disables). */
  layerPoolSize?: number;
  /** How long create and resume wait for the agent to connect (default 15 s). */
  readyTimeoutMs?: number;
}

/** Kept on disk per sandbox so that a restarted server can resume, snapshot and destroy it. */
interface SandboxMeta {
  id: string;
  templateRoot: string;
  templateLayers?: string[];
  hostname: string;
  resources: SandboxSpec['resources'];
  subvolId?: number;
  netnsPath?: string;
  net?: NetConfig;
  mounts?: BindMount[];
  /** Runs with the statx shim preloaded (restores must mount exactly what the checkpoint had). */
  statxShim?: boolean;
  /**
   * runsc container of the current run: every restore starts a new one, so the
   * saved one can be deleted in the background (runsc delete waits until init
   * has reaped the exited sandbox, which takes seconds).
   */
  runscId: string;
  createdAt: string;
}

/** What a fork needs besides the image and the layer. */
interface SnapshotMeta {
  sourceId: string;
  templateRoot: string;
  templateLayers?: string[];
  hostname: string;
  resources: SandboxSpec['resources'];
  netns: boolean;
  statxShim?: boolean;
  createdAt: string;
}

/** Where the agent dials inside the sandbox: the bind-mounted run dir. */
const CHANNEL_IN_SANDBOX = '/run/sandpit/host.sock';
/** The statx shim (built next to the agent, see packages/agent/statx-shim.c) and the preload list naming it. */
const SHIM_IN_SANDBOX = '/.sandpit/statx-shim.so';
const SHIM_FILE = 'sandpit-statx.so';
const CHANNEL_CLOSE_TIMEOUT_MS = 2000;
/** An agent that does not answer a check this fast (stopped, swamped) is bypassed through runsc instead of waited on. */
const AGENT_CHECK_TIMEOUT_MS = 2000;
const quietLogger: Logger = { info: () => undefined, warn: (m) => console.warn(m) };

/**
 * Sandboxes in gVisor (runsc, ptrace platform): the same overlay root and
 * quota-capped btrfs layers as the container driver, cgroup limits through the
 * OCI spec, and pause as a real checkpoint to disk (`runsc checkpoint`), so a
 * paused sandbox holds no memory and survives a host restart; resume is
 * `runsc restore` and every process continues. Snapshots are a checkpoint
 * image hard-linked next to a read-only btrfs snapshot of the layer; forks
 * restore that image into a writable copy of the layer.
 */
export class GvisorDriver implements RuntimeDriver {
  readonly name = 'gvisor' as const;
  readonly pauseKeeps = 'disk' as const;
  readonly snapshots: SnapshotEngine;

  private readonly opts: GvisorDriverOptions;
  private readonly paths: GvisorPaths;
  private readonly logger: Logger;
  private readonly runsc: Runsc;
  private readonly layers: LayerStore;
  private readonly mutex = new KeyedLock();
  private readonly channels = new Map<string, AgentChannel>();
  /** Sandboxes being checkpointed: their channel must stay shut until the save is over. */
  private readonly capturing = new Set<string>();
  private readonly deleting = new Set<Promise<void>>();
  private cgroups: CgroupV1 | undefined;
  private nofile = 1024;
  /** Host paths of the statx shim and of the ld.so.preload file that loads it; undefined when the shim was not built. */
  private shim: { library: string; preload: string } | undefined;

  constructor(opts: GvisorDriverOptions) {
    this.opts = opts;
    this.paths = gvisorPaths(opts.dataDir);
    this.logger = opts.logger ?? quietLogger;
    this.runsc = new Runsc(this.paths.runscRoot);
    this.layers = new LayerStore({
      image: this.paths.layerImage,
      mountPoint: this.paths.layersDir,
      sizeGiB: opts.layerStoreGiB ?? 256,
      poolSize: opts.layerPoolSize ?? 2,
      logger: this.logger,
    });
    this.snapshots = {
      capture: (id, snapshotId) => this.capture(id, snapshotId),
      createFrom: (spec, snapshotId) => this.createFrom(spec, snapshotId),
      inspect: (snapshotId) => this.inspectSnapshot(snapshotId),
      delete: (snapshotId) => this.deleteSnapshot(snapshotId),
      list: () => this.listSnapshots(),
    };
  }

  /** True when runsc can start a sandbox on this host (tried once), else the reason. */
  static async available(): Promise<true | string> {
    const root = await mkdtemp(join(tmpdir(), 'sandpit-runsc-probe-'));
    try {
      return await probeRunsc(root);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }

  async init(): Promise<void> {
    await Promise.all([mkdir(this.paths.runscRoot, { recursive: true, mode: 0o700 }), mkdir(this.paths.sandboxesDir, { recursive: true, mode: 0o711 })]);
    const cgroups = await CgroupV1.detect();
    await cgroups.prepareParent();
    this.cgroups = cgroups;
    await this.layers.init();
    await Promise.all([this.paths.checkpointsDir, this.paths.snapshotImagesDir, this.paths.snapshotsDir].map((d) => mkdir(d, { recursive: true })));
    await moveLegacyImages(this.paths);
    this.nofile = await hardNofileLimit();
    const library = join(dirname(this.opts.agentBinary), SHIM_FILE);
    if (await exists(library)) {
      await writeFile(this.paths.preloadList, `${SHIM_IN_SANDBOX}\n`, { mode: 0o644 });
      this.shim = { library, preload: this.paths.preloadList };
    } else this.logger.warn(`gvisor: ${library} is missing (make -C packages/agent): \`ls -l\` and \`stat\` will fail in sandboxes`);
    await settleInterruptedCaptures(this.paths, this.runsc, this.logger, (rid) => this.forget(rid));
    this.layers.replenish();
  }

  async close(opts: { release?: boolean } = {}): Promise<void> {
    await this.layers.close();
    await Promise.all(this.deleting);
    for (const ch of this.channels.values()) await ch.close(0);
    this.channels.clear();
    if (!opts.release) return;
    const left = await this.list();
    if (left.length > 0) throw new Error(`cannot unmount the layer store: ${left.length} sandboxes remain`);
    await unmountUnder(this.paths.layersDir);
  }

  agentSocket(id: string): string {
    return gvisorSandboxPaths(this.paths, id).channel;
  }

  upperDir(id: string): string {
    return this.layers.upper(id);
  }

  async connectAgent(id: string, timeoutMs: number): Promise<Socket> {
    checkId(id);
    let ch = this.channels.get(id);
    // After a server restart the channel is opened on first use; never during a checkpoint.
    if (!ch?.listening && !this.capturing.has(id) && (await this.runscState(id))?.status === 'running' && !this.capturing.has(id)) {
      ch = this.channel(id);
      await ch.open();
    }
    if (!ch) throw Object.assign(new Error(`sandbox ${id} is not running`), { code: 'ECONNREFUSED' });
    return ch.accept(timeoutMs);
  }

  private channel(id: string): AgentChannel {
    let ch = this.channels.get(id);
    if (!ch) {
      ch = new AgentChannel(gvisorSandboxPaths(this.paths, id).channel);
      this.channels.set(id, ch);
    }
    return ch;
  }

  create(spec: SandboxSpec): Promise<void> {
    checkSpec(spec);
    return this.mutex.run(spec.id, async () => {
      const sp = gvisorSandboxPaths(this.paths, spec.id);
      if (await exists(sp.dir)) throw new Error(`sandbox ${spec.id} already exists`);
      for (const p of [this.opts.agentBinary, spec.templateRoot]) if (!(await exists(p))) throw new Error(`${p} not found`);
      try {
        await mkdir(sp.runDir, { recursive: true });
        const { ready, capped } = this.layers.acquire(spec.id, spec.resources.diskMib);
        const layer = ready.then(() => writeSandboxEtc(this.layers.upper(spec.id), spec, undefined));
        const mounted = Promise.all([layer, mkdir(sp.rootfs)]).then(() => mountOverlay(lowerDirs(spec), this.layers.upper(spec.id), this.layers.work(spec.id), sp.rootfs));
        const [subvolId, net] = await Promise.all([
          capped,
          spec.netnsPath ? (spec.netConfig ?? captureNet(spec.netnsPath)) : undefined,
          mounted,
          this.writeConfig(spec, spec.id, sp.config, sp.rootfs, sp.runDir, !!this.shim),
        ]);
        await this.writeMeta(sp.meta, { ...metaOf(spec, spec.id), subvolId, net, statxShim: !!this.shim });
        await this.start(spec.id, spec.id, () => this.runsc.run(spec.id, sp.dir, sp.log, !!spec.netnsPath));
      } catch (err) {
        await this.destroyLocked(spec.id).catch((e: Error) => this.logger.warn(`cleanup after failed create of ${spec.id}: ${e.message}`));
        throw new Error(`creating sandbox ${spec.id} failed: ${(err as Error).message}`);
      } finally {
        this.layers.replenish();
      }
    });
  }

  /** Opens the channel, runs runsc (run or restore), and waits for the agent to dial in. */
  private async start(id: string, runscId: string, launch: () => Promise<void>): Promise<void> {
    const ch = this.channel(id);
    await ch.open();
    await launch();
    await Promise.all([raiseEngineMemory(this.cg(), runscId), unpinEngine(this.cg(), runscId)]);
    await ch.ready(this.opts.readyTimeoutMs ?? 15_000, async () => (await this.runsc.state(runscId))?.status === 'running');
  }

  /** The config of a run; its cgroup is named after the runsc container, so runs never share one. */
  private async writeConfig(spec: SandboxSpec, runscId: string, path: string, rootfs: string, runDir: string, shim: boolean): Promise<void> {
    const config = ociConfig({ spec: { ...spec, id: runscId }, rootfs, runDir, agentBinary: this.opts.agentBinary, nofile: this.nofile }) as {
      process: { args: string[] };
      mounts: object[];
    };
    // gVisor refuses a listening socket on a host mount, so the agent dials the host instead.
    // gVisor has no OOM killer of its own: the agent's guard kills inside before the host kills the sentry.
    config.process.args = [config.process.args[0]!, '--connect', CHANNEL_IN_SANDBOX, '--oom-guard'];
    if (shim) {
      if (!this.shim) throw new Error(`the sandbox was started with the statx shim, which is missing (make -C packages/agent)`);
      const ro = ['bind', 'ro', 'nosuid', 'nodev'];
      config.mounts.push(
        { destination: SHIM_IN_SANDBOX, type: 'bind', source: this.shim.library, options: ro },
        { destination: '/etc/ld.so.preload', type: 'bind', source: this.shim.preload, options: ro },
      );
    }
    await writeFile(path, JSON.stringify(config));
  }

  private async writeMeta(path: string, meta: SandboxMeta): Promise<void> {
    await writeFile(`${path}.tmp`, JSON.stringify(meta));
    await rename(`${path}.tmp`, path);
  }

  private async runscState(id: string) {
    const meta = await readJson<SandboxMeta>(gvisorSandboxPaths(this.paths, id).meta);
    return meta ? this.runsc.state(meta.runscId) : undefined;
  }

  /** Deletes a finished runsc container in the background; its cgroup goes with it. */
  private forget(runscId: string): void {
    const done = this.runsc
      .deleteForce(runscId)
      .then(() => this.cg().remove(runscId))
      .catch((err: Error) => this.logger.warn(`gvisor: deleting ${runscId}: ${err.message}`))
      .finally(() => this.deleting.delete(done));
    this.deleting.add(done);
  }

  pause(id: string): Promise<void> {
    checkId(id);
    return this.mutex.run(id, () => this.checkpointLocked(id));
  }

  /**
   * Checkpoints a running sandbox to its image; the sandbox ends, its memory
   * is freed. Refused (CaptureRefused) when gVisor would fail the save, since
   * this runsc ends the sandbox on a failed save. `known`: its runsc state, when the caller just read it.
   */
  private async checkpointLocked(id: string, known?: RunscState): Promise<void> {
    const sp = gvisorSandboxPaths(this.paths, id);
    const meta = await readJson<SandboxMeta>(sp.meta);
    if (!meta) throw new Error(`sandbox ${id} not found`);
    // Independent reads: whether it runs (and its sentry's pid), and its TCP endpoints.
    const [rs, tcp] = await Promise.all([known ?? this.liveState(id, meta.runscId), meta.netnsPath ? this.procNetTcp(id, meta.runscId).catch((err: Error) => err) : undefined]);
    if (rs?.status !== 'running') throw new Error(`sandbox ${id} is not running`);
    if (tcp instanceof Error) throw tcp;
    const open = tcp === undefined ? [] : openTcpEndpoints(tcp);
    if (open.length > 0) {
      throw new CaptureRefused(`the sandbox has ${open.length} open TCP connection(s) (${open.slice(0, 3).join(', ')}); gVisor cannot checkpoint network connections: close them and retry`);
    }
    this.capturing.add(id);
    const ch = this.channel(id);
    try {
      if (!(await ch.close(CHANNEL_CLOSE_TIMEOUT_MS, rs.pid))) {
        await ch.open();
        throw new CaptureRefused('a process in the sandbox keeps the agent channel open, which gVisor cannot checkpoint; retry');
      }
      await rm(sp.partial, { recursive: true, force: true });
      await mkdir(sp.partial, { recursive: true });
      try {
        await this.runsc.checkpoint(meta.runscId, sp.partial, sp.image, sp.checkpointPid, sp.checkpointLog);
      } catch (err) {
        await rm(sp.partial, { recursive: true, force: true });
        if ((await this.runsc.state(meta.runscId))?.status === 'running') {
          // The save failed but the sandbox survived it (e.g. a just-closed connection the check could not see): keep it, refuse.
          await ch.open();
          throw new CaptureRefused(`gVisor could not checkpoint the sandbox, which keeps running; retry later (${(err as Error).message})`);
        }
        throw new Error(`${(err as Error).message} (runsc ended the sandbox)`);
      } finally {
        await rm(sp.checkpointPid, { force: true });
      }
      // The saved sandbox has exited: its runsc record and cgroups go in the background, the image stays.
      this.forget(meta.runscId);
    } finally {
      this.capturing.delete(id);
    }
  }

  /**
   * What `runsc state` (a process start) would say of a running sandbox, learnt
   * faster while its agent's control connection is up: the agent answers, and
   * runsc's state file names the sandbox process, which is alive.
   */
  private async liveState(id: string, runscId: string): Promise<RunscState | undefined> {
    const control = this.channels.get(id)?.control;
    if (control) {
      const [pid] = await Promise.all([this.runsc.sandboxPid(runscId), within(control.ping(), AGENT_CHECK_TIMEOUT_MS)]).catch(() => [undefined]);
      if (pid && isAlive(pid)) return { id: runscId, pid, status: 'running' };
    }
    return this.runsc.state(runscId);
  }

  /**
   * /proc/net/tcp{,6} of a running sandbox, read by the agent itself through
   * its control connection; `runsc exec` (two orders of magnitude dearer under
   * ptrace, docs/host-timings.md) only while the agent has not dialed in, e.g. just after a server restart.
   */
  private async procNetTcp(id: string, runscId: string): Promise<string> {
    const control = this.channels.get(id)?.control;
    const viaRunsc = () => this.runsc.exec(runscId, ['cat', '/proc/net/tcp', '/proc/net/tcp6']);
    if (!control) return viaRunsc();
    const files = await within(Promise.all(['/proc/net/tcp', '/proc/net/tcp6'].map((p) => control.readSmall(p))), AGENT_CHECK_TIMEOUT_MS).catch(() => undefined);
    return files ? Buffer.concat(files).toString('utf8') : viaRunsc();
  }

  resume(id: string): Promise<void> {
    checkId(id);
    return this.mutex.run(id, async () => {
      const sp = gvisorSandboxPaths(this.paths, id);
      await this.restoreLocked(id, sp.image);
      // Every process is back in memory: the image is spent.
      await rm(sp.image, { recursive: true, force: true });
    });
  }

  private async restoreLocked(id: string, image: string): Promise<void> {
    const sp = gvisorSandboxPaths(this.paths, id);
    const meta = await readJson<SandboxMeta>(sp.meta);
    if (!meta) throw new Error(`sandbox ${id} not found`);
    if (!(await exists(image))) throw new Error(`sandbox ${id} has no checkpoint to restore`);
    const runscId = `${id}-${Date.now().toString(36)}`;
    await Promise.all([
      this.writeConfig(specOf(meta), runscId, sp.config, sp.rootfs, sp.runDir, !!meta.statxShim),
      this.writeMeta(sp.meta, { ...meta, runscId }),
      // After a host restart the overlay is gone (the layer store is re-mounted by init).
      isMountPoint(sp.rootfs).then(async (m) => {
        if (!m) await mountOverlay(lowerDirs(meta), this.layers.upper(id), this.layers.work(id), sp.rootfs);
      }),
      meta.netnsPath && meta.net ? provisionNet(meta.netnsPath, meta.net) : undefined,
    ]);
    try {
      await this.start(id, runscId, () => this.runsc.restore(runscId, sp.dir, image, sp.log, !!meta.netnsPath));
    } catch (err) {
      await this.channel(id).close(0);
      await this.runsc.deleteForce(runscId).catch(() => undefined);
      await this.cg()
        .remove(runscId)
        .catch(() => undefined);
      throw err;
    }
  }

  private async capture(id: string, snapshotId: string): Promise<SnapshotFiles & { running: Promise<boolean> }> {
    checkId(id);
    checkId(snapshotId);
    let complete!: (files: SnapshotFiles) => void;
    const files = new Promise<SnapshotFiles>((resolve) => (complete = resolve));
    // The caller is answered when the snapshot is on disk; the sandbox's restore finishes under the lock.
    const running = this.mutex.run(id, () => this.captureLocked(id, snapshotId, complete));
    return { ...(await Promise.race([files, running.then(() => files)])), running };
  }

  /** Calls `complete` once the snapshot is whole, then resolves with whether the sandbox runs. */
  private async captureLocked(id: string, snapshotId: string, complete: (files: SnapshotFiles) => void): Promise<boolean> {
    const sp = gvisorSandboxPaths(this.paths, id);
    const meta = await readJson<SandboxMeta>(sp.meta);
    if (!meta) throw new Error(`sandbox ${id} not found`);
    const rs = await this.liveState(id, meta.runscId);
    const running = rs?.status === 'running';
    if (!running && !(await exists(sp.image))) throw new Error(`sandbox ${id} is neither running nor paused`);
    const snap = snapshotPaths(this.paths, snapshotId);
    const prepared = Promise.all([removeTree(snap.partial), rm(snap.imagePartial, { recursive: true, force: true })]).then(() => Promise.all([mkdir(snap.partial), mkdir(snap.imagePartial)]));
    prepared.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
    let restoring: Promise<boolean> | undefined;
    // A running sandbox continues; if it cannot, it stays paused on its complete image.
    const restart = (): Promise<boolean> =>
      this.restoreLocked(id, sp.image).then(
        () => true,
        (err: Error) => {
          this.logger.warn(`gvisor: ${id} stays paused after its snapshot: ${err.message}`);
          return false;
        },
      );
    // Every process is back in memory (and the snapshot has its links): the image is spent.
    const continued = async (): Promise<boolean> => {
      const runs = await restoring!;
      if (runs) await rm(sp.image, { recursive: true, force: true }).catch((err: Error) => this.logger.warn(`gvisor: ${err.message}`));
      return runs;
    };
    try {
      if (running) await this.checkpointLocked(id, rs);
      await prepared;
      await freezeLayer(this.layers.dir(id), join(snap.partial, 'layer'), this.layers.quotas);
      // Image files are never rewritten, so the snapshot shares them with the sandbox's checkpoint.
      await Promise.all((await readdir(sp.image)).map((f) => link(join(sp.image, f), join(snap.imagePartial, f))));
      await rename(snap.imagePartial, snap.image);
      const sm: SnapshotMeta = {
        sourceId: id,
        templateRoot: meta.templateRoot,
        templateLayers: meta.templateLayers,
        hostname: meta.hostname,
        resources: meta.resources,
        netns: !!meta.netnsPath,
        statxShim: meta.statxShim,
        createdAt: new Date().toISOString(),
      };
      await writeFile(join(snap.partial, 'snapshot.json'), JSON.stringify(sm));
      await rename(snap.partial, snap.dir);
    } catch (err) {
      await prepared.catch(() => undefined);
      await this.removeSnapshotFiles(snap).catch(() => undefined);
      // A failed capture still continues the sandbox before the failure is told.
      if (running && !restoring && (await exists(sp.image))) restoring = restart();
      if (restoring) await continued();
      throw err;
    }
    complete({ sizeBytes: await snapshotBytes(snap) });
    if (!running) return false;
    // Restored only once the caller has its answer: the restore's CPU burst (two cores here) would delay it.
    restoring = restart();
    return continued();
  }

  private createFrom(spec: SandboxSpec, snapshotId: string): Promise<void> {
    checkSpec(spec);
    checkId(snapshotId);
    return this.mutex.run(spec.id, async () => {
      const snap = snapshotPaths(this.paths, snapshotId);
      const sm = await readJson<SnapshotMeta>(snap.meta);
      if (!sm) throw new Error(`snapshot ${snapshotId} not found`);
      if (sm.netns !== !!spec.netnsPath) throw new Error(`snapshot ${snapshotId} was taken ${sm.netns ? 'with' : 'without'} a network namespace`);
      const id = spec.id;
      const sp = gvisorSandboxPaths(this.paths, id);
      if (await exists(sp.dir)) throw new Error(`sandbox ${id} already exists`);
      if (!(await exists(sm.templateRoot))) throw new Error(`the template root of snapshot ${snapshotId} is gone`);
      const forked: SandboxSpec = { ...spec, templateRoot: sm.templateRoot, templateLayers: sm.templateLayers, hostname: sm.hostname, resources: sm.resources };
      try {
        const dirs = mkdir(sp.runDir, { recursive: true }).then(() => mkdir(sp.rootfs));
        const thawed = thawLayer(snap.layer, this.layers.dir(id), this.layers.quotas, sm.resources.diskMib);
        const [subvolId, net] = await Promise.all([
          thawed,
          spec.netnsPath ? (spec.netConfig ?? captureNet(spec.netnsPath)) : undefined,
          Promise.all([dirs, thawed]).then(() => mountOverlay(lowerDirs(sm), this.layers.upper(id), this.layers.work(id), sp.rootfs)),
          dirs.then(() => this.writeConfig(forked, id, sp.config, sp.rootfs, sp.runDir, !!sm.statxShim)),
        ]);
        await this.writeMeta(sp.meta, { ...metaOf(forked, id), subvolId, net, statxShim: sm.statxShim });
        await this.start(id, id, () => this.runsc.restore(id, sp.dir, snap.image, sp.log, !!spec.netnsPath));
      } catch (err) {
        await this.destroyLocked(id).catch((e: Error) => this.logger.warn(`cleanup after failed fork ${id}: ${e.message}`));
        throw new Error(`creating sandbox ${id} from snapshot ${snapshotId} failed: ${(err as Error).message}`);
      }
    });
  }

  private async inspectSnapshot(snapshotId: string): Promise<SnapshotFiles | undefined> {
    checkId(snapshotId);
    const snap = snapshotPaths(this.paths, snapshotId);
    if (!(await exists(snap.meta))) return undefined;
    return { sizeBytes: await snapshotBytes(snap) };
  }

  private async deleteSnapshot(snapshotId: string): Promise<void> {
    checkId(snapshotId);
    await this.removeSnapshotFiles(snapshotPaths(this.paths, snapshotId));
  }

  /** The snapshot dir goes first: without it the image is an orphan, never a snapshot that looks whole. */
  private async removeSnapshotFiles(snap: SnapshotPaths): Promise<void> {
    await removeTree(snap.partial);
    await removeTree(snap.dir);
    await Promise.all([snap.image, snap.imagePartial].map((d) => rm(d, { recursive: true, force: true })));
  }

  private async listSnapshots(): Promise<string[]> {
    const names = [...(await subdirNames(this.paths.snapshotsDir)), ...(await subdirNames(this.paths.snapshotImagesDir))];
    return [...new Set(names.map((n) => n.replace(/\.partial$/, '')))];
  }

  destroy(id: string): Promise<void> {
    checkId(id);
    return this.mutex.run(id, () => this.destroyLocked(id));
  }

  /** Every step tolerates what an earlier, interrupted destroy (or a crash) left behind. */
  private async destroyLocked(id: string): Promise<void> {
    const sp = gvisorSandboxPaths(this.paths, id);
    await this.channels.get(id)?.close(0);
    this.channels.delete(id);
    for (const rid of (await this.runsc.list()).filter((r) => sandboxOf(r) === id)) {
      await this.runsc.kill(rid);
      await this.runsc.deleteForce(rid);
      await this.cg()
        .remove(rid)
        .catch((err: Error) => this.logger.warn(`gvisor: ${err.message}`));
    }
    await unmountUnder(sp.dir);
    const meta = await readJson<SandboxMeta>(sp.meta);
    // The netstack took the namespace's addresses; hand them back for whoever uses it next.
    if (meta?.netnsPath && meta.net && (await exists(meta.netnsPath))) {
      await provisionNet(meta.netnsPath, meta.net).catch((err: Error) => this.logger.warn(`gvisor: ${err.message}`));
    }
    await this.layers.remove(id, meta?.subvolId);
    await rm(join(this.paths.checkpointsDir, id), { recursive: true, force: true });
    await rm(sp.dir, { recursive: true, force: true });
  }

  async state(id: string): Promise<EngineState> {
    checkId(id);
    const sp = gvisorSandboxPaths(this.paths, id);
    const [rs, image, dir, layer] = await Promise.all([this.runscState(id), exists(sp.image), exists(sp.dir), exists(this.layers.dir(id))]);
    if (rs?.status === 'running') return 'running';
    if (image) return 'paused';
    return rs || dir || layer ? 'stopped' : 'missing';
  }

  async list(): Promise<string[]> {
    const [dirs, runscIds, layerIds, checkpoints] = await Promise.all([
      subdirNames(this.paths.sandboxesDir),
      this.runsc.list().then((ids) => ids.map(sandboxOf)),
      this.layers.list(),
      subdirNames(this.paths.checkpointsDir),
    ]);
    return [...new Set([...dirs, ...runscIds, ...layerIds, ...checkpoints])].sort();
  }

  async health(id: string): Promise<EngineHealth> {
    const meta = await readJson<SandboxMeta>(gvisorSandboxPaths(this.paths, id).meta);
    if (!meta || this.capturing.has(id)) return 'unknown';
    return pidHealth(await this.runsc.sandboxPid(meta.runscId), this.cg().dir('memory', meta.runscId));
  }

  async stats(id: string): Promise<EngineStats> {
    checkId(id);
    const cg = this.cg();
    const sp = gvisorSandboxPaths(this.paths, id);
    const meta = await readJson<SandboxMeta>(sp.meta);
    if (!meta) throw new Error(`sandbox ${id} not found`);
    const [memoryBytes, cpuUsageNs, diskBytes] = await Promise.all([
      cg.readNumber('memory', meta.runscId, 'memory.usage_in_bytes'),
      cg.readNumber('cpuacct', meta.runscId, 'cpuacct.usage'),
      this.layers.usage(id, meta.subvolId),
    ]);
    return { memoryBytes, cpuUsageNs, diskBytes };
  }

  private cg(): CgroupV1 {
    if (!this.cgroups) throw new Error('gvisor driver: call init() first');
    return this.cgroups;
  }
}

function metaOf(spec: SandboxSpec, runscId: string): SandboxMeta {
  return {
    id: spec.id,
    templateRoot: spec.templateRoot,
    hostname: spec.hostname,
    resources: spec.resources,
    ...(spec.templateLayers?.length ? { templateLayers: spec.templateLayers } : {}),
    ...(spec.netnsPath ? { netnsPath: spec.netnsPath } : {}),
    ...(spec.mounts ? { mounts: spec.mounts } : {}),
    runscId,
    createdAt: new Date().toISOString(),
  };
}

/** The spec a restore writes its config from (env lives in the image, not here). */
function specOf(meta: SandboxMeta): SandboxSpec {
  return {
    id: meta.id,
    templateRoot: meta.templateRoot,
    templateLayers: meta.templateLayers,
    resources: meta.resources,
    env: {},
    hostname: meta.hostname,
    ...(meta.netnsPath ? { netnsPath: meta.netnsPath } : {}),
    ...(meta.mounts ? { mounts: meta.mounts } : {}),
  };
}

/** runsc containers are named `<sandbox id>` (first run) or `<sandbox id>-<run>`. */
/** `p`, or a rejection once `ms` have passed. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Bytes a snapshot holds on disk: its layer and metadata, and its image (shared with a checkpoint while one links it). */
async function snapshotBytes(snap: SnapshotPaths): Promise<number> {
  const [dir, image] = await Promise.all([treeBytes(snap.dir), treeBytes(snap.image)]);
  return dir + image;
}
