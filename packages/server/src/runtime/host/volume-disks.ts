import { chown, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { LayerStore, type Logger } from './layer-store.ts';
import { runCaptured } from './posix-spawn.ts';

/** Ids the volume's root is owned by on disk: the sandbox's `user` (both engines show disk ids as they are). */
const USER_ID = 1000;
const MIB = 1024 * 1024;

/**
 * The disks of volumes on this host: each a btrfs subvolume with a qgroup limit at its size, in a
 * btrfs store of its own (a sparse loop image, mounted as the engines' layer stores are), apart from
 * any engine's, so a volume outlives every sandbox and engine that mounts it. Without btrfs, volumes
 * are plain directories and their size is not enforced.
 */
export class VolumeDisks {
  readonly #store: LayerStore;
  readonly #logger: Logger;
  readonly #subvolIds = new Map<string, number>();

  constructor(opts: { image: string; mountPoint: string; sizeGiB: number; logger: Logger }) {
    this.#logger = opts.logger;
    // Its own warning is an engine's; this store says what it means for volumes below.
    this.#store = new LayerStore({ ...opts, poolSize: 0, logger: { info: () => undefined, warn: () => undefined } });
  }

  get quotas(): boolean {
    return this.#store.quotas;
  }

  async init(): Promise<void> {
    await this.#store.init();
    if (!this.quotas) this.#logger.warn(`volumes: no btrfs store at ${this.#store.mountPoint}; volume sizes are NOT enforced`);
  }

  async close(): Promise<void> {
    await this.#store.close();
  }

  /** The volume's root on the host. */
  path(id: string): string {
    return this.#store.dir(id);
  }

  async create(id: string, sizeMib: number): Promise<void> {
    const dir = this.path(id);
    if (this.quotas) {
      await runCaptured('btrfs', ['subvolume', 'create', dir]);
      await this.resize(id, sizeMib);
    } else {
      await mkdir(dir);
    }
    await chown(dir, USER_ID, USER_ID);
  }

  async resize(id: string, sizeMib: number): Promise<void> {
    if (this.quotas) await runCaptured('btrfs', ['qgroup', 'limit', String(sizeMib * MIB), this.path(id)]);
  }

  /** Bytes the volume holds (btrfs accounts at each transaction commit, so it may lag by seconds). */
  async usage(id: string): Promise<number> {
    return this.#store.usage(id, await this.#subvolId(id));
  }

  /** Deletes the volume's files (the subvolume and its qgroup): its bytes leave the host. */
  async remove(id: string): Promise<void> {
    await this.#store.remove(id, await this.#subvolId(id));
    this.#subvolIds.delete(id);
  }

  /** Ids of the volumes on disk. */
  async list(): Promise<string[]> {
    return (await readdir(this.#store.mountPoint, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
  }

  async #subvolId(id: string): Promise<number | undefined> {
    if (!this.quotas) return undefined;
    const known = this.#subvolIds.get(id);
    if (known !== undefined) return known;
    if ((await stat(this.path(id)).catch(() => undefined))?.ino !== 256) return undefined;
    const out = await runCaptured('btrfs', ['inspect-internal', 'rootid', this.path(id)]);
    const subvolId = Number(out.stdout.trim());
    this.#subvolIds.set(id, subvolId);
    return subvolId;
  }
}

export const volumeDiskPaths = (dataDir: string) => ({ image: join(dataDir, 'volumes.img'), mountPoint: join(dataDir, 'volumes') });
