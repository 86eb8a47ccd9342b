import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BindMount, checkId, type EngineState, type EngineStats, type RuntimeDriver, type SandboxMoves, type SandboxSpec, type SnapshotEngine, type WritableLayer } from '../driver.ts';
import type { EngineHealth } from '../engine-health.ts';
import { CgroupV1 } from '../host/cgroups.ts';
import { hardNofileLimit } from '../host/host-checks.ts';
import { KeyedLock } from '../host/keyed-lock.ts';
import { LayerStore, type Logger } from '../host/layer-store.ts';
import { unmountUnder } from '../host/mounts.ts';
import { lowerDirs } from '../host/overlay.ts';
import { exists } from '../../optional-files.ts';
import { readMeta } from './sandbox-meta.ts';
import { checkpointLocked, restoreLocked } from './checkpoint.ts';
import { bootLocked, dropMemoryLocked, stopLocked } from './disk-pause.ts';
import { type DriverState, forget, type GvisorDriverOptions } from './driver-state.ts';
import { RunscEngines, type RunscPlatform, resolveBinary, defaultRunsc, platformFor, runscVersion } from './engines.ts';
import { channel, prepareShim } from './launch.ts';
import { create, destroyLocked } from './lifecycle.ts';
import { gvisorPaths, gvisorSandboxPaths, snapshotPaths } from './paths.ts';
import { listenForRunningAgents, moveLegacyImages, settleInterruptedCaptures } from './recovery.ts';
import { probeRunsc } from './runsc.ts';
import { gvisorSandboxMoves } from './sandbox-moves.ts';
import { gvisorSnapshotTransfer } from './snapshot-transfer.ts';
import { gvisorSnapshots } from './snapshots.ts';
import { health, list, runscState, state, stats, templatePaths } from './status.ts';
import { attachToRun } from './volume-hub.ts';

export type { GvisorDriverOptions } from './driver-state.ts';

const quietLogger: Logger = { info: () => undefined, warn: (m) => console.warn(m) };

/**
 * Sandboxes in gVisor (runsc, ptrace platform): the same overlay root and
 * quota-capped btrfs layers as the container driver, cgroup limits through the
 * OCI spec, and pause as a real checkpoint to disk (`runsc checkpoint`), so a
 * paused sandbox holds no memory and survives a host restart; resume is
 * `runsc restore` and every process continues. The work is done in
 * lifecycle.ts, checkpoint.ts, snapshots.ts and status.ts; this class holds
 * their shared state and takes each sandbox's lock.
 */
export class GvisorDriver implements RuntimeDriver {
  readonly name = 'gvisor' as const;
  readonly pauseKeeps = 'disk' as const;
  readonly snapshots: SnapshotEngine;
  readonly moves: SandboxMoves;

  private readonly st: DriverState;
  /** The agents of running sandboxes listened for again after a restart (background; close waits for it). */
  #reopening: Promise<void> = Promise.resolve();

  constructor(opts: GvisorDriverOptions) {
    const paths = gvisorPaths(opts.dataDir);
    const logger = opts.logger ?? quietLogger;
    this.st = {
      opts,
      paths,
      logger,
      engines: new RunscEngines(paths, opts.checkpointCompression),
      layers: new LayerStore({ image: paths.layerImage, mountPoint: paths.layersDir, sizeGiB: opts.layerStoreGiB ?? 256, poolSize: opts.layerPoolSize ?? 2, logger }),
      mutex: new KeyedLock(),
      channels: new Map(),
      capturing: new Set(),
      deleting: new Map(),
      cgroups: undefined,
      nofile: 1024,
      shim: undefined,
    };
    this.snapshots = { ...gvisorSnapshots(this.st), transfer: gvisorSnapshotTransfer(this.st) };
    this.moves = gvisorSandboxMoves(this.st);
  }

  /** True when the runsc new sandboxes would get can start a sandbox on this host (tried once), else the reason. */
  static async available(opts: { runsc?: string; runscPlatform?: RunscPlatform } = {}): Promise<true | string> {
    const binary = await resolveBinary(opts.runsc ?? (await defaultRunsc())).catch((err: Error) => err);
    if (binary instanceof Error) return binary.message;
    const root = await mkdtemp(join(tmpdir(), 'sandpit-runsc-probe-'));
    try {
      return await probeRunsc(binary, platformFor(await runscVersion(binary).catch(() => ''), opts.runscPlatform ?? 'systrap'), root);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }

  async init(): Promise<void> {
    const { paths } = this.st;
    await Promise.all([mkdir(paths.runscRoot, { recursive: true, mode: 0o700 }), mkdir(paths.sandboxesDir, { recursive: true, mode: 0o711 })]);
    await this.st.engines.init({ path: this.st.opts.runsc, platform: this.st.opts.runscPlatform ?? 'systrap' });
    const cgroups = await CgroupV1.detect();
    await cgroups.prepareParent();
    this.st.cgroups = cgroups;
    await this.st.layers.init();
    await Promise.all([paths.checkpointsDir, paths.snapshotImagesDir, paths.snapshotsDir].map((d) => mkdir(d, { recursive: true })));
    await moveLegacyImages(paths);
    this.st.nofile = await hardNofileLimit();
    await prepareShim(this.st);
    await this.st.engines.load();
    await settleInterruptedCaptures(paths, this.st.engines, this.st.logger, (runsc, rid) => forget(this.st, runsc, rid));
    this.st.layers.replenish();
    this.#reopening = listenForRunningAgents(this.st);
  }

  async close(opts: { release?: boolean } = {}): Promise<void> {
    await this.st.layers.close();
    await this.#reopening;
    await Promise.all(this.st.deleting.values());
    for (const ch of this.st.channels.values()) await ch.close(0);
    this.st.channels.clear();
    if (!opts.release) return;
    const left = await this.list();
    if (left.length > 0) throw new Error(`cannot unmount the layer store: ${left.length} sandboxes remain`);
    await unmountUnder(this.st.paths.layersDir);
  }

  agentSocket(id: string): string {
    return gvisorSandboxPaths(this.st.paths, id).channel;
  }

  upperDir(id: string): string {
    return this.st.layers.upper(id);
  }

  async writableLayer(id: string): Promise<WritableLayer | undefined> {
    checkId(id);
    const meta = await readMeta(gvisorSandboxPaths(this.st.paths, id).meta);
    if (!meta) return undefined;
    const layer: WritableLayer = { upper: this.st.layers.upper(id), lowers: lowerDirs(meta) };
    if (!meta.baseSnapshot) return layer;
    const snapshotUpper = join(snapshotPaths(this.st.paths, meta.baseSnapshot).layer, 'upper');
    return { ...layer, snapshotId: meta.baseSnapshot, ...((await exists(snapshotUpper)) ? { snapshotUpper } : {}) };
  }

  async connectAgent(id: string, timeoutMs: number): Promise<Socket> {
    checkId(id);
    const { channels, capturing } = this.st;
    let ch = channels.get(id);
    // After a server restart the channel is opened on first use; never during a checkpoint.
    if (!ch?.listening && !capturing.has(id) && (await runscState(this.st, id))?.status === 'running' && !capturing.has(id)) {
      ch = channel(this.st, id);
      await ch.open();
    }
    if (!ch) throw Object.assign(new Error(`sandbox ${id} is not running`), { code: 'ECONNREFUSED' });
    return ch.accept(timeoutMs);
  }

  create(spec: SandboxSpec): Promise<void> {
    return create(this.st, spec);
  }

  /** Volumes for a running sandbox (a create that restored its template's capture): through its hub (volume-hub.ts). */
  attachVolumes(id: string, mounts: readonly BindMount[]): Promise<void> {
    checkId(id);
    return this.st.mutex.run(id, () => attachToRun(this.st, id, mounts));
  }

  pause(id: string): Promise<void> {
    checkId(id);
    return this.st.mutex.run(id, () => checkpointLocked(this.st, id));
  }

  stop(id: string): Promise<void> {
    checkId(id);
    return this.st.mutex.run(id, () => stopLocked(this.st, id));
  }

  dropMemory(id: string): Promise<void> {
    checkId(id);
    return this.st.mutex.run(id, () => dropMemoryLocked(this.st, id));
  }

  resume(id: string): Promise<void> {
    checkId(id);
    return this.st.mutex.run(id, async () => {
      const sp = gvisorSandboxPaths(this.st.paths, id);
      if (!(await exists(sp.image))) return bootLocked(this.st, id);
      await restoreLocked(this.st, id, sp.image);
      // Every process is back in memory: the image is spent.
      await rm(sp.image, { recursive: true, force: true });
    });
  }

  destroy(id: string): Promise<void> {
    checkId(id);
    return this.st.mutex.run(id, () => destroyLocked(this.st, id));
  }

  state(id: string): Promise<EngineState> {
    checkId(id);
    return state(this.st, id);
  }

  list(): Promise<string[]> {
    return list(this.st);
  }

  templatePaths(): Promise<string[]> {
    return templatePaths(this.st);
  }

  health(id: string): Promise<EngineHealth> {
    return health(this.st, id);
  }

  stats(id: string): Promise<EngineStats> {
    checkId(id);
    return stats(this.st, id);
  }
}
