import { lstat, mkdir, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { listMounts } from './mounts.ts';
import { runCommand } from './run-command.ts';

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
}

export interface LayerStoreOptions {
  /** Sparse image file holding the store, and where it is mounted. */
  image: string;
  mountPoint: string;
  /** Apparent size of the sparse image; host disk is only used as sandboxes write. */
  sizeGiB: number;
  logger: Logger;
}

/**
 * Writable layers (overlay upper + work dirs) of all sandboxes, each in its
 * own btrfs subvolume with a qgroup limit, so a sandbox's disk use is capped
 * at its diskMib. The store is one btrfs filesystem in a sparse loop-mounted
 * image under the data dir. (This kernel has no XFS or ext4 quota support,
 * CONFIG_XFS_QUOTA and QFMT_V2 are off, but btrfs qgroups are built in.)
 * Without btrfs the layers are plain directories and disk is not capped.
 */
export class LayerStore {
  readonly mountPoint: string;
  private readonly opts: LayerStoreOptions;
  private sysfsQgroups: string | undefined;
  private btrfs = false;

  constructor(opts: LayerStoreOptions) {
    this.opts = opts;
    this.mountPoint = opts.mountPoint;
  }

  get quotas(): boolean {
    return this.btrfs;
  }

  async init(): Promise<void> {
    try {
      await this.mountStore();
      this.btrfs = true;
    } catch (err) {
      this.opts.logger.warn(`container driver: no btrfs layer store (${(err as Error).message}); sandbox disks are NOT capped`);
      await mkdir(this.mountPoint, { recursive: true });
    }
  }

  private async mountStore(): Promise<void> {
    const { image, mountPoint, sizeGiB } = this.opts;
    await mkdir(mountPoint, { recursive: true });
    let mount = (await listMounts()).find((m) => m.mountPoint === mountPoint);
    if (mount && mount.fsType !== 'btrfs') throw new Error(`${mountPoint} is a ${mount.fsType} mount, not btrfs`);
    if (!mount) {
      const exists = await stat(image).then(() => true, () => false);
      if (!exists) {
        const fh = await open(image, 'wx');
        await fh.truncate(sizeGiB * 1024 ** 3);
        await fh.close();
        // Single metadata copy: the host disk below already is the durability layer.
        await runCommand('mkfs.btrfs', ['-q', '-m', 'single', '-d', 'single', image]);
      }
      // discard lets deleted sandbox data punch holes back into the sparse image.
      await runCommand('mount', ['-o', 'loop,noatime,discard=async', image, mountPoint]);
      mount = (await listMounts()).find((m) => m.mountPoint === mountPoint);
      if (!mount) throw new Error(`mounting ${image} at ${mountPoint} left no mount`);
    }
    this.sysfsQgroups = await findSysfsQgroups(mount.source);
    if (!this.sysfsQgroups || !(await stat(this.sysfsQgroups).then(() => true, () => false))) {
      await runCommand('btrfs', ['quota', 'enable', mountPoint]);
      this.sysfsQgroups = await findSysfsQgroups(mount.source);
    }
  }

  dir(id: string): string {
    return join(this.mountPoint, id);
  }

  upper(id: string): string {
    return join(this.mountPoint, id, 'upper');
  }

  work(id: string): string {
    return join(this.mountPoint, id, 'work');
  }

  /** Makes the sandbox's layer (subvolume) with empty upper/ and work/ dirs. */
  async create(id: string): Promise<void> {
    const dir = this.dir(id);
    if (this.btrfs) await runCommand('btrfs', ['subvolume', 'create', dir]);
    else await mkdir(dir);
    await Promise.all([mkdir(this.upper(id)), mkdir(this.work(id))]);
  }

  /** Caps the layer at `diskMib`; returns the subvolume id used for usage reads. */
  async limit(id: string, diskMib: number): Promise<number | undefined> {
    if (!this.btrfs) return undefined;
    const dir = this.dir(id);
    const [, rootid] = await Promise.all([
      runCommand('btrfs', ['qgroup', 'limit', String(diskMib * 1024 * 1024), dir]),
      runCommand('btrfs', ['inspect-internal', 'rootid', dir]),
    ]);
    return Number(rootid.stdout.trim());
  }

  /** Bytes the layer holds (btrfs accounts at each transaction commit, so it may lag by seconds). */
  async usage(id: string, subvolId: number | undefined): Promise<number> {
    if (this.btrfs && subvolId && this.sysfsQgroups) {
      const text = await readFile(join(this.sysfsQgroups, `0_${subvolId}`, 'referenced'), 'utf8').catch(() => '');
      if (text) return Number(text.trim());
    }
    return duBytes(this.dir(id));
  }

  async remove(id: string, subvolId: number | undefined): Promise<void> {
    const dir = this.dir(id);
    if (!(await stat(dir).then(() => true, () => false))) return;
    if (this.btrfs && (await stat(dir)).ino === 256) {
      await runCommand('btrfs', ['subvolume', 'delete', dir]);
      // The qgroup outlives its subvolume until btrfs has cleaned it; an
      // early destroy is refused, and a leftover one is harmless (ids are never reused).
      if (subvolId) await runCommand('btrfs', ['qgroup', 'destroy', `0/${subvolId}`, this.mountPoint]).catch(() => undefined);
    } else {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async list(): Promise<string[]> {
    const entries = await readdir(this.mountPoint, { withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
  }
}

/** /sys/fs/btrfs/<uuid>/qgroups of the filesystem on `device` (e.g. /dev/loop3). */
async function findSysfsQgroups(device: string): Promise<string | undefined> {
  const dev = basename(device);
  for (const uuid of await readdir('/sys/fs/btrfs').catch(() => [] as string[])) {
    const devices = await readdir(join('/sys/fs/btrfs', uuid, 'devices')).catch(() => [] as string[]);
    if (devices.includes(dev)) return join('/sys/fs/btrfs', uuid, 'qgroups');
  }
  return undefined;
}

/** Disk use of a tree, for layers without quota accounting. */
async function duBytes(dir: string): Promise<number> {
  let total = 0;
  const seen = new Set<number>();
  const walk = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const p = join(d, e.name);
      const st = await lstat(p).catch(() => undefined);
      if (!st || seen.has(st.ino)) continue;
      seen.add(st.ino);
      total += st.blocks * 512;
      if (e.isDirectory()) await walk(p);
    }
  };
  await walk(dir);
  return total;
}
