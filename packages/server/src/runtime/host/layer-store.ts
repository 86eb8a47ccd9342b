import { lstat, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { listMounts } from './mounts.ts';
import { runCaptured } from './posix-spawn.ts';
import { runCommand } from './run-command.ts';

const REFILL_DELAY_MS = 250;

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
  /** Ready-made layers kept for fast creates (0 disables). */
  poolSize: number;
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
  private readonly pool: PoolEntry[] = [];
  /** Per driver instance, so instances sharing a data dir never take each other's entries. */
  private readonly poolDir: string;
  private poolSeq = 0;
  private wantedMib = 4096;
  private refilling: Promise<void> | undefined;
  private closed = false;

  constructor(opts: LayerStoreOptions) {
    this.opts = opts;
    this.mountPoint = opts.mountPoint;
    this.poolDir = join(opts.mountPoint, `.pool-${process.pid}-${++instances}`);
  }

  get quotas(): boolean {
    return this.btrfs;
  }

  async init(): Promise<void> {
    try {
      await this.mountStore();
      this.btrfs = true;
      await this.removeStalePools();
      await mkdir(this.poolDir);
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
      const exists = await stat(image).then(
        () => true,
        () => false,
      );
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
    if (
      !this.sysfsQgroups ||
      !(await stat(this.sysfsQgroups).then(
        () => true,
        () => false,
      ))
    ) {
      await runCommand('btrfs', ['quota', 'enable', mountPoint]);
      this.sysfsQgroups = await findSysfsQgroups(mount.source);
    }
  }

  /** Pools left by driver instances whose process has died. */
  private async removeStalePools(): Promise<void> {
    for (const name of await readdir(this.mountPoint)) {
      const pid = Number(name.match(/^\.pool-(\d+)-\d+$/)?.[1]);
      if (!pid || pidAlive(pid)) continue;
      const dir = join(this.mountPoint, name);
      await deleteSubvolumes((await readdir(dir)).map((n) => join(dir, n)));
      await rm(dir, { recursive: true, force: true });
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

  /**
   * Gives sandbox `id` its layer. `ready` resolves once upper/ and work/ exist
   * (the overlay can be mounted), `capped` once the disk limit is in force,
   * with the subvolume id. A pre-made layer from the pool is just renamed into
   * place, which keeps btrfs commands off the create path.
   */
  acquire(id: string, diskMib: number): { ready: Promise<void>; capped: Promise<number | undefined> } {
    const dir = this.dir(id);
    if (!this.btrfs) {
      const ready = mkdir(dir)
        .then(() => Promise.all([mkdir(this.upper(id)), mkdir(this.work(id))]))
        .then(() => undefined);
      return { ready, capped: ready.then(() => undefined) };
    }
    this.wantedMib = diskMib;
    const i = this.pool.findIndex((e) => e.diskMib === diskMib);
    const entry = i >= 0 ? this.pool.splice(i, 1)[0] : this.pool.shift();
    if (entry) {
      const ready = rename(entry.path, dir);
      const capped = entry.diskMib === diskMib ? ready.then(() => entry.subvolId) : ready.then(() => runCaptured('btrfs', ['qgroup', 'limit', String(diskMib * MIB), dir])).then(() => entry.subvolId);
      return { ready, capped };
    }
    const ready = makeLayer(dir);
    return { ready, capped: ready.then(() => capLayer(dir, diskMib)) };
  }

  /** Tops the pool up a moment after a create, so the refill's btrfs commits do not slow its first commands. */
  replenishSoon(): void {
    setTimeout(() => this.replenish(), REFILL_DELAY_MS).unref();
  }

  /** Tops the pool up in the background (called after a create, not during one, to leave it the CPU). */
  replenish(): void {
    if (!this.btrfs || this.closed || this.refilling || this.pool.length >= this.opts.poolSize) return;
    this.refilling = (async () => {
      try {
        while (!this.closed && this.pool.length < this.opts.poolSize) {
          const diskMib = this.wantedMib;
          const path = join(this.poolDir, String(this.poolSeq++));
          await makeLayer(path);
          const subvolId = await capLayer(path, diskMib);
          if (subvolId !== undefined) this.pool.push({ path, subvolId, diskMib });
        }
      } catch (err) {
        this.opts.logger.warn(`container driver: refilling the layer pool failed: ${(err as Error).message}`);
      } finally {
        this.refilling = undefined;
      }
    })();
  }

  /** Stops refilling and deletes the pooled layers (the sandboxes' own layers stay). */
  async close(): Promise<void> {
    this.closed = true;
    await this.refilling;
    await deleteSubvolumes(this.pool.splice(0).map((e) => e.path));
    await rm(this.poolDir, { recursive: true, force: true });
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
    if (
      !(await stat(dir).then(
        () => true,
        () => false,
      ))
    )
      return;
    if (this.btrfs && (await stat(dir)).ino === 256) {
      await runCaptured('btrfs', ['subvolume', 'delete', dir]);
      // The qgroup outlives its subvolume until btrfs has cleaned it; an
      // early destroy is refused, and a leftover one is harmless (ids are never reused).
      if (subvolId) await runCaptured('btrfs', ['qgroup', 'destroy', `0/${subvolId}`, this.mountPoint]).catch(() => undefined);
    } else {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async list(): Promise<string[]> {
    const entries = await readdir(this.mountPoint, { withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
  }
}

const MIB = 1024 * 1024;
let instances = 0;

interface PoolEntry {
  path: string;
  subvolId: number;
  diskMib: number;
}

async function makeLayer(dir: string): Promise<void> {
  await runCaptured('btrfs', ['subvolume', 'create', dir]);
  await Promise.all([mkdir(join(dir, 'upper')), mkdir(join(dir, 'work'))]);
}

/** Sets the qgroup limit on the subvolume at `dir`; returns its id. */
async function capLayer(dir: string, diskMib: number): Promise<number> {
  const [, rootid] = await Promise.all([runCaptured('btrfs', ['qgroup', 'limit', String(diskMib * MIB), dir]), runCaptured('btrfs', ['inspect-internal', 'rootid', dir])]);
  return Number(rootid.stdout.trim());
}

async function deleteSubvolumes(paths: string[]): Promise<void> {
  if (paths.length > 0) await runCaptured('btrfs', ['subvolume', 'delete', ...paths]).catch(() => undefined);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
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
