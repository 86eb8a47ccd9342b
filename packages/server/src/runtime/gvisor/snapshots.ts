import { link, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exists, readJson, subdirNames } from '../../optional-files.ts';
import { type BindMount, checkId, checkSpec, type SandboxSpec, type SnapshotEngine, type SnapshotFiles } from '../driver.ts';
import { checkpointLocked, liveState, restoreLocked } from './checkpoint.ts';
import { type DriverState, runscOf } from './driver-state.ts';
import type { RunscEngine } from './engines.ts';
import { engineCpusFor, start, writeConfig } from './launch.ts';
import { freezeLayer, removeTree, thawLayer, treeBytes } from './layer-copies.ts';
import { destroyLocked } from './lifecycle.ts';
import { lowerDirs, mountOverlay } from '../host/overlay.ts';
import { captureNet } from './netns.ts';
import { gvisorSandboxPaths, type SnapshotPaths, snapshotPaths } from './paths.ts';
import { metaOf, readMeta, writeMeta } from './sandbox-meta.ts';
import { mountHubVolumes } from './volume-hub.ts';

/** What a fork needs besides the image and the layer. */
export interface SnapshotMeta {
  sourceId: string;
  templateRoot: string;
  templateLayers?: string[];
  hostname: string;
  resources: SandboxSpec['resources'];
  netns: boolean;
  statxShim?: boolean;
  sudo?: boolean;
  engineCpus?: number;
  /** As the sandbox's meta (volume-hub.ts): its runs mount the hub, and these volumes were given to it running. */
  volumeHub?: boolean;
  hubMounts?: BindMount[];
  /** The build that wrote the image, which forks restore with; absent: the legacy one (engines.ts). */
  engine?: RunscEngine;
  createdAt: string;
}

/**
 * Snapshots are a checkpoint image hard-linked next to a read-only btrfs
 * snapshot of the layer; forks restore that image into a writable copy of the layer.
 */
export function gvisorSnapshots(st: DriverState): SnapshotEngine {
  return {
    capture: (id, snapshotId) => capture(st, id, snapshotId),
    createFrom: (spec, snapshotId) => createFrom(st, spec, snapshotId),
    inspect: (snapshotId) => inspect(st, snapshotId),
    delete: async (snapshotId) => {
      checkId(snapshotId);
      await removeSnapshotFiles(snapshotPaths(st.paths, snapshotId));
    },
    list: async () => {
      const names = [...(await subdirNames(st.paths.snapshotsDir)), ...(await subdirNames(st.paths.snapshotImagesDir))];
      return [...new Set(names.map((n) => n.replace(/\.partial$/, '')))];
    },
  };
}

async function capture(st: DriverState, id: string, snapshotId: string): Promise<SnapshotFiles & { running: Promise<boolean> }> {
  checkId(id);
  checkId(snapshotId);
  let complete!: (files: SnapshotFiles) => void;
  const files = new Promise<SnapshotFiles>((resolve) => (complete = resolve));
  // The caller is answered when the snapshot is on disk; the sandbox's restore finishes under the lock.
  const running = st.mutex.run(id, () => captureLocked(st, id, snapshotId, complete));
  return { ...(await Promise.race([files, running.then(() => files)])), running };
}

/** Calls `complete` once the snapshot is whole, then resolves with whether the sandbox runs. */
async function captureLocked(st: DriverState, id: string, snapshotId: string, complete: (files: SnapshotFiles) => void): Promise<boolean> {
  const sp = gvisorSandboxPaths(st.paths, id);
  const meta = await readMeta(sp.meta);
  if (!meta) throw new Error(`sandbox ${id} not found`);
  const rs = await liveState(st, id, runscOf(st, meta), meta.runscId);
  const running = rs?.status === 'running';
  if (!running && !(await exists(sp.image))) throw new Error(`sandbox ${id} is neither running nor paused`);
  const snap = snapshotPaths(st.paths, snapshotId);
  const prepared = Promise.all([removeTree(snap.partial), rm(snap.imagePartial, { recursive: true, force: true })]).then(() => Promise.all([mkdir(snap.partial), mkdir(snap.imagePartial)]));
  prepared.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
  let restoring: Promise<boolean> | undefined;
  // A running sandbox continues; if it cannot, it stays paused on its complete image.
  const restart = (): Promise<boolean> =>
    restoreLocked(st, id, sp.image).then(
      () => true,
      (err: Error) => {
        st.logger.warn(`gvisor: ${id} stays paused after its snapshot: ${err.message}`);
        return false;
      },
    );
  // Every process is back in memory (and the snapshot has its links): the image is spent.
  const continued = async (): Promise<boolean> => {
    const runs = await restoring!;
    if (runs) await rm(sp.image, { recursive: true, force: true }).catch((err: Error) => st.logger.warn(`gvisor: ${err.message}`));
    return runs;
  };
  try {
    if (running) await checkpointLocked(st, id, rs);
    await prepared;
    await freezeLayer(st.layers.dir(id), join(snap.partial, 'layer'), st.layers.quotas);
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
      sudo: meta.sudo,
      engineCpus: meta.engineCpus,
      volumeHub: meta.volumeHub,
      hubMounts: meta.hubMounts,
      ...(meta.engine ? { engine: meta.engine } : {}),
      createdAt: new Date().toISOString(),
    };
    await writeFile(join(snap.partial, 'snapshot.json'), JSON.stringify(sm));
    await rename(snap.partial, snap.dir);
  } catch (err) {
    await prepared.catch(() => undefined);
    await removeSnapshotFiles(snap).catch(() => undefined);
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

function createFrom(st: DriverState, spec: SandboxSpec, snapshotId: string): Promise<void> {
  checkSpec(spec);
  checkId(snapshotId);
  return st.mutex.run(spec.id, async () => {
    const snap = snapshotPaths(st.paths, snapshotId);
    const sm = await readJson<SnapshotMeta>(snap.meta);
    if (!sm) throw new Error(`snapshot ${snapshotId} not found`);
    if (sm.netns !== !!spec.netnsPath) throw new Error(`snapshot ${snapshotId} was taken ${sm.netns ? 'with' : 'without'} a network namespace`);
    const id = spec.id;
    const sp = gvisorSandboxPaths(st.paths, id);
    if (await exists(sp.dir)) throw new Error(`sandbox ${id} already exists`);
    if (!(await exists(sm.templateRoot))) throw new Error(`the template root of snapshot ${snapshotId} is gone`);
    const { mounts, hubMounts } = forkMounts(spec, sm);
    const forked: SandboxSpec = { ...spec, mounts, templateRoot: sm.templateRoot, templateLayers: sm.templateLayers, hostname: sm.hostname, resources: sm.resources };
    try {
      const dirs = mkdir(sp.runDir, { recursive: true }).then(() => mkdir(sp.rootfs));
      const thawed = thawLayer(snap.layer, st.layers.dir(id), st.layers.quotas, sm.resources.diskMib);
      const [subvolId, net] = await Promise.all([
        thawed,
        spec.netnsPath ? (spec.netConfig ?? captureNet(spec.netnsPath)) : undefined,
        Promise.all([dirs, thawed]).then(() => mountOverlay(lowerDirs(sm), st.layers.upper(id), st.layers.work(id), sp.rootfs)),
        dirs.then(() => writeConfig(st, forked, id, sp.config, sp.rootfs, sp.runDir, { shim: !!sm.statxShim, sudo: !!sm.sudo, engineCpus: sm.engineCpus, hub: !!sm.volumeHub })),
        sm.volumeHub ? mountHubVolumes(sp.hub, hubMounts) : undefined,
      ]);
      await writeMeta(sp.meta, {
        ...metaOf(forked, id),
        baseSnapshot: snapshotId,
        subvolId,
        net,
        statxShim: sm.statxShim,
        sudo: sm.sudo,
        engineCpus: sm.engineCpus,
        volumeHub: sm.volumeHub,
        hubMounts,
        ...(sm.engine ? { engine: sm.engine } : {}),
      });
      const runsc = runscOf(st, sm);
      await start(st, id, runsc, id, forked.resources.memoryMib, () => runsc.restore(id, sp.dir, snap.image, sp.log, !!spec.netnsPath));
    } catch (err) {
      await destroyLocked(st, id).catch((e: Error) => st.logger.warn(`cleanup after failed fork ${id}: ${e.message}`));
      throw new Error(`creating sandbox ${id} from snapshot ${snapshotId} failed: ${(err as Error).message}`);
    }
  });
}

/**
 * The fork's own mounts and the volumes it restores through the hub: the snapshot's sandbox had some
 * volumes from its start (OCI mounts, which a restore must have again) and may have been given others
 * running (`hubMounts`, matched by path). The spec's volumes are the ones the snapshot recorded.
 */
function forkMounts(spec: SandboxSpec, sm: SnapshotMeta): { mounts?: BindMount[]; hubMounts?: BindMount[] } {
  if (!sm.hubMounts?.length) return { mounts: spec.mounts };
  const hubMounts = sm.hubMounts.map((h) => {
    const m = spec.mounts?.find((x) => x.volume && x.destination === h.destination);
    if (!m) throw new Error(`the snapshot had a volume at ${h.destination} that the fork is not given`);
    return m;
  });
  return { mounts: spec.mounts?.filter((m) => !hubMounts.includes(m)), hubMounts };
}

async function inspect(st: DriverState, snapshotId: string): Promise<SnapshotFiles | undefined> {
  checkId(snapshotId);
  const snap = snapshotPaths(st.paths, snapshotId);
  if (!(await exists(snap.meta))) return undefined;
  const sm = await readJson<SnapshotMeta>(snap.meta);
  const now = st.engines.default;
  // Without the hub a capture could not take volumes: it is taken again.
  const stale =
    !!sm && ((sm.engineCpus ?? sm.resources.vcpuCount) !== engineCpusFor(st, sm.resources.vcpuCount) || sm.engine?.version !== now.version || sm.engine?.platform !== now.platform || !sm.volumeHub);
  return { sizeBytes: await snapshotBytes(snap), stale };
}

/** The snapshot dir goes first: without it the image is an orphan, never a snapshot that looks whole. */
export async function removeSnapshotFiles(snap: SnapshotPaths): Promise<void> {
  await removeTree(snap.partial);
  await removeTree(snap.dir);
  await Promise.all([snap.image, snap.imagePartial].map((d) => rm(d, { recursive: true, force: true })));
}

/** Bytes a snapshot holds on disk: its layer and metadata, and its image (shared with a checkpoint while one links it). */
async function snapshotBytes(snap: SnapshotPaths): Promise<number> {
  const [dir, image] = await Promise.all([treeBytes(snap.dir), treeBytes(snap.image)]);
  return dir + image;
}
