import { closeSync, constants, fchmodSync, fchownSync, fstatSync, type Stats } from 'node:fs';
import { lstat, mkdir, readdir, readlink } from 'node:fs/promises';
import { posix } from 'node:path';
import { badRequest, conflict } from '../../errors.ts';
import type { Beneath } from '../../runtime/host/beneath.ts';
import type { Principal } from '../access/principal.ts';
import { relPath, relPathOrRoot, withRoot } from './volume-paths.ts';
import type { VolumeService } from './volumes.ts';

/** Owner of what the API makes in a volume unless told otherwise: the sandbox's `user`, as its root is. */
const USER_ID = 1000;
/** How deep a listing may recurse: bounds the work one request makes. */
export const MAX_LIST_DEPTH = 32;

/** An entry of a volume with the whole of its stat (what E2B's volume content API reports). */
export interface VolumeStat {
  name: string;
  /** From the volume's root, `/`-rooted. */
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  size: number;
  mode: number;
  uid: number;
  gid: number;
  atime: Date;
  mtime: Date;
  ctime: Date;
  /** A symlink's target, as written (never followed). */
  target?: string;
}

export interface Ownership {
  uid?: number;
  gid?: number;
  /** Permission bits (and setuid, setgid, sticky); the file type bits are ignored. */
  mode?: number;
}

/**
 * Directories, stat and ownership of a volume's entries without a sandbox, on the host. Paths resolve
 * beneath the volume's root in the kernel (`volume-paths.ts`); the last component is never followed,
 * so a symlink is reported or refused, not traversed.
 */
export class VolumeTree {
  readonly #volumes: VolumeService;

  constructor(volumes: VolumeService) {
    this.#volumes = volumes;
  }

  async stat(p: Principal, volume: string, path: string): Promise<VolumeStat> {
    const rel = relPathOrRoot(path);
    return this.#at(p, volume, (b) => statOf(b, rel));
  }

  /** The entries beneath a directory, `depth` levels down (1: its children); each directory's names sorted, a directory before what it holds. */
  async list(p: Principal, volume: string, path: string, depth: number): Promise<VolumeStat[]> {
    if (!Number.isInteger(depth) || depth < 1 || depth > MAX_LIST_DEPTH) throw badRequest(`depth must be an integer from 1 to ${MAX_LIST_DEPTH}`);
    const rel = relPathOrRoot(path);
    return this.#at(p, volume, async (b) => {
      const out: VolumeStat[] = [];
      await walk(b, rel, depth, async (st) => void out.push(st));
      return out;
    });
  }

  /** Makes a directory; `parents` makes missing parents and accepts one that exists. 409: something is there already. */
  async makeDir(p: Principal, volume: string, path: string, opts: Ownership & { parents: boolean }): Promise<VolumeStat> {
    const rel = relPath(path);
    return this.#at(p, volume, async (b) => {
      const parentRel = posix.dirname(rel);
      if (opts.parents && parentRel !== '.') b.mkdirs(parentRel, USER_ID, USER_ID);
      const { dir, name } = b.parent(rel);
      try {
        await mkdir(`/proc/self/fd/${dir}/${name}`, 0o755);
        fchownAt(b, rel, { uid: USER_ID, gid: USER_ID });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const there = await lstat(`/proc/self/fd/${dir}/${name}`);
        if (!opts.parents || !there.isDirectory()) throw conflict(`'${path.slice(0, 256)}' exists already`);
      } finally {
        closeSync(dir);
      }
      fchownAt(b, rel, { uid: opts.uid, gid: opts.gid, mode: opts.mode });
      return statOf(b, rel);
    });
  }

  /** Changes owner and mode of a file or directory (a symlink is refused: its mode means nothing). */
  async setOwnership(p: Principal, volume: string, path: string, opts: Ownership): Promise<VolumeStat> {
    const rel = relPathOrRoot(path);
    return this.#at(p, volume, async (b) => {
      fchownAt(b, rel, opts);
      return statOf(b, rel);
    });
  }

  /** Removes a file, a symlink (not what it points to) or a directory with everything in it. */
  async removeTree(p: Principal, volume: string, path: string): Promise<void> {
    const rel = relPath(path);
    await this.#at(p, volume, async (b) => {
      const top = await statOf(b, rel);
      if (top.type === 'dir') {
        const below: VolumeStat[] = [];
        await walk(b, rel, Number.POSITIVE_INFINITY, async (st) => void below.push(st));
        // Deepest first, so each directory is empty when its turn comes.
        for (const st of below.reverse()) b.remove(st.path.slice(1), st.type === 'dir');
      }
      b.remove(rel, top.type === 'dir');
    });
  }

  async #at<T>(p: Principal, volume: string, fn: (b: Beneath) => Promise<T>): Promise<T> {
    const rec = await this.#volumes.get(p, volume);
    return withRoot(this.#volumes.rootOf(rec), fn);
  }
}

/** The entry at `rel` (`''`: the root) without following it if it is a symlink. */
async function statOf(b: Beneath, rel: string): Promise<VolumeStat> {
  if (rel === '') {
    const fd = b.open('', constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      return toStat('', '/', fstatSync(fd));
    } finally {
      closeSync(fd);
    }
  }
  const { dir, name } = b.parent(rel);
  try {
    // The parent's descriptor, opened beneath the root; lstat does not follow the last component.
    const at = `/proc/self/fd/${dir}/${name}`;
    const st = await lstat(at);
    return toStat(name, `/${rel}`, st, st.isSymbolicLink() ? await readlink(at) : undefined);
  } finally {
    closeSync(dir);
  }
}

/** Calls `each` for every entry below directory `rel`, parents before children, `depth` levels down. */
async function walk(b: Beneath, rel: string, depth: number, each: (st: VolumeStat) => Promise<void>): Promise<void> {
  const fd = b.open(rel, constants.O_RDONLY | constants.O_DIRECTORY);
  const dirs: string[] = [];
  try {
    const at = `/proc/self/fd/${fd}`;
    for (const name of (await readdir(at)).sort()) {
      const st = await lstat(`${at}/${name}`).catch(() => undefined);
      if (!st) continue;
      const childRel = rel ? `${rel}/${name}` : name;
      await each(toStat(name, `/${childRel}`, st, st.isSymbolicLink() ? await readlink(`${at}/${name}`).catch(() => '') : undefined));
      if (st.isDirectory()) dirs.push(childRel);
    }
  } finally {
    closeSync(fd);
  }
  if (depth > 1) for (const d of dirs) await walk(b, d, depth - 1, each);
}

/** Applies owner and mode through a descriptor opened beneath the root without following a symlink. */
function fchownAt(b: Beneath, rel: string, o: Ownership): void {
  if (o.uid === undefined && o.gid === undefined && o.mode === undefined) return;
  for (const [k, v] of Object.entries(o)) {
    if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > 0xffff_fffe)) throw badRequest(`${k} must be a non-negative integer`);
  }
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
  const fd = b.open(rel, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (o.uid !== undefined || o.gid !== undefined) fchownSync(fd, o.uid ?? -1, o.gid ?? -1);
    if (o.mode !== undefined) fchmodSync(fd, o.mode & 0o7777);
  } finally {
    closeSync(fd);
  }
}

function toStat(name: string, path: string, st: Stats, target?: string): VolumeStat {
  const type = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'other';
  return { name, path, type, size: st.size, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, atime: st.atime, mtime: st.mtime, ctime: st.ctime, ...(target === undefined ? {} : { target }) };
}
