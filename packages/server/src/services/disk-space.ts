import { statfs } from 'node:fs/promises';
import { ApiError } from '../errors.ts';

const MIB = 1024 * 1024;

/**
 * Free space on the data disk (store, layer store image, checkpoints, snapshots, templates). Work
 * that writes much is refused while less than the reserve is left, so the running sandboxes keep
 * the reserve: their layers live in a sparse image on this disk, and a write the host cannot back
 * fails inside the sandbox's filesystem.
 */
export class DiskSpace {
  readonly #dir: string;
  readonly #reserveMib: number;

  constructor(dir: string, reserveMib: number) {
    this.#dir = dir;
    this.#reserveMib = reserveMib;
  }

  async freeBytes(): Promise<number> {
    const st = await statfs(this.#dir);
    return st.bavail * st.bsize;
  }

  /** 507 `insufficient_storage` when the disk is down to its reserve. */
  async assertRoom(what: string): Promise<void> {
    const free = await this.freeBytes();
    if (free >= this.#reserveMib * MIB) return;
    throw new ApiError(
      507,
      'insufficient_storage',
      `the platform's data disk is full (${Math.floor(free / MIB)} MiB free, ${this.#reserveMib} MiB are kept for running sandboxes): ${what} refused, nothing was changed; retry once space is freed`,
    );
  }
}

/** An error of a write that found the disk full: a file, SQLite, or a command's output saying so. */
export function diskFull(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return code === 'ENOSPC' || code === 'SQLITE_FULL' || code === 'EDQUOT' || /No space left on device|database or disk is full/.test(err.message);
}
