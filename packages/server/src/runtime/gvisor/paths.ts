import { join } from 'node:path';

/** Where the gvisor driver keeps its state: all of it under `<dataDir>/gvisor`, apart from other drivers'. */
export interface GvisorPaths {
  gvisorDir: string;
  /** runsc's state root for sandboxes whose meta names no engine (see engines.ts); each recorded engine has its own next to it. */
  runscRoot: string;
  sandboxesDir: string;
  layerImage: string;
  layersDir: string;
  /**
   * Checkpoint images, on the host file system: a btrfs commit (which every layer snapshot
   * waits for) must not have to write them out. Snapshots hard-link them, so they share it.
   */
  checkpointsDir: string;
  snapshotImagesDir: string;
  /** Snapshot layers and metadata, inside the layer store so btrfs can snapshot layers. */
  snapshotsDir: string;
  /** Where earlier versions kept checkpoints inside the layer store (moved out on init). */
  legacyCheckpointsDir: string;
  /** Mounted read-only as a sandbox's /etc/ld.so.preload: names the statx shim. */
  preloadList: string;
  /** runsc's logs of the last saves that took their sandbox down (the sandbox's own files go with it). */
  failedSavesDir: string;
}

export function gvisorPaths(dataDir: string): GvisorPaths {
  const root = join(dataDir, 'gvisor');
  const layersDir = join(root, 'layers');
  return {
    gvisorDir: root,
    runscRoot: join(root, 'runsc'),
    sandboxesDir: join(root, 'sandboxes'),
    layerImage: join(root, 'layers.img'),
    layersDir,
    checkpointsDir: join(root, 'checkpoints'),
    snapshotImagesDir: join(root, 'snapshot-images'),
    // Dot names: the layer store lists only sandbox layers and skips these.
    snapshotsDir: join(layersDir, '.snapshots'),
    legacyCheckpointsDir: join(layersDir, '.checkpoints'),
    preloadList: join(root, 'ld.so.preload'),
    failedSavesDir: join(root, 'failed-saves'),
  };
}

export interface GvisorSandboxPaths {
  dir: string;
  config: string;
  meta: string;
  rootfs: string;
  runDir: string;
  /** Mounted into every run (volume-hub.ts): volumes given to the sandbox while it runs are bound under it, one directory each. */
  hub: string;
  /** Host end of the agent channel: the agent dials it (runsc --host-uds=open). */
  channel: string;
  log: string;
  /** A complete checkpoint image: present exactly while the sandbox is paused. */
  image: string;
  /** Where a checkpoint is written; renamed to `image` only once runsc reports success. */
  partial: string;
  /** PID of the checkpoint in progress, so a restarted server can wait for it. */
  checkpointPid: string;
  checkpointLog: string;
}

/** The volume hub's directory in a sandbox's directory. */
export const HUB_DIR = 'volumes';

export function gvisorSandboxPaths(p: GvisorPaths, id: string): GvisorSandboxPaths {
  const dir = join(p.sandboxesDir, id);
  const ck = join(p.checkpointsDir, id);
  return {
    dir,
    config: join(dir, 'config.json'),
    meta: join(dir, 'sandbox.json'),
    rootfs: join(dir, 'rootfs'),
    runDir: join(dir, 'run'),
    hub: join(dir, HUB_DIR),
    channel: join(dir, 'run', 'host.sock'),
    log: join(dir, 'runsc.log'),
    image: join(ck, 'image'),
    partial: join(ck, 'image.partial'),
    checkpointPid: join(ck, 'checkpoint.pid'),
    checkpointLog: join(ck, 'checkpoint.log'),
  };
}

export interface SnapshotPaths {
  dir: string;
  /** Built here and renamed to `dir` when complete (after the image), so a crash never leaves a half snapshot that looks whole. */
  partial: string;
  layer: string;
  meta: string;
  image: string;
  /** The image is linked here, then renamed to `image`. */
  imagePartial: string;
  /** Where earlier versions kept the image (inside `dir`). */
  legacyImage: string;
}

export function snapshotPaths(p: GvisorPaths, snapshotId: string): SnapshotPaths {
  const base = join(p.snapshotsDir, snapshotId);
  const image = join(p.snapshotImagesDir, snapshotId);
  return {
    dir: base,
    partial: `${base}.partial`,
    layer: join(base, 'layer'),
    meta: join(base, 'snapshot.json'),
    image,
    imagePartial: `${image}.partial`,
    legacyImage: join(base, 'image'),
  };
}

/** The sandbox a runsc container id belongs to (ids are the sandbox's UUID plus a per-run suffix). */
export function sandboxOf(runscId: string): string {
  return runscId.slice(0, 36);
}
