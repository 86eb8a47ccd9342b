import { closeSync, openSync, readlinkSync, writeFileSync } from 'node:fs';
import koffi from 'koffi';
import { libc } from './libc.ts';
import { spawnToLog } from './posix-spawn.ts';

/** Ids a sandbox has inside its user namespace: 0 (root) to 65535, as in a Docker image. */
export const SANDBOX_IDS = 65536;

/**
 * The host ids the first sandbox's id 0 starts at (each sandbox has its own range above it): 0x70000000, in the range
 * systemd leaves unused (above its container ranges, 524288-1879048191, and Debian's /etc/subuid
 * ranges; below 2^31, as some tools read ids as signed). A multiple of 65536, so the low 16 bits of a
 * host id are the sandbox's own id.
 */
export const DEFAULT_ID_BASE = 0x7000_0000;

const AT_FDCWD = -100;
const AT_EMPTY_PATH = 0x1000;
const OPEN_TREE_CLONE = 1;
const OPEN_TREE_CLOEXEC = 0o2000000;
const MOUNT_ATTR_IDMAP = 0x100000;

koffi.struct('mount_attr', { attr_set: 'uint64', attr_clr: 'uint64', propagation: 'uint64', userns_fd: 'uint64' });
const openTree = libc.func('int open_tree(int dfd, const char *path, unsigned int flags)');
const mountSetattr = libc.func('int mount_setattr(int dfd, const char *path, unsigned int flags, mount_attr *attr, size_t size)');
const mount = libc.func('int mount(const char *source, const char *target, const char *fstype, unsigned long flags, const char *data)');
const strerror = libc.func('const char *strerror(int errnum)');

/** The uid_map / gid_map of a sandbox's user namespace. */
export function sandboxIdMappings(base: number): { containerID: number; hostID: number; size: number }[] {
  return [{ containerID: 0, hostID: base, size: SANDBOX_IDS }];
}

/**
 * Mounts an overlay at `target` over idmapped views (mount_setattr MOUNT_ATTR_IDMAP) of `lowers` (top
 * first) and of `layerDir` (which holds `upper` and `work`), mapped by the user namespace `userns`
 * (from sandboxUserns), so that files stay owned on disk by the ids the image has (root = 0) while the
 * sandbox, whose root is host uid `base`, sees and writes them as its own. The views are detached
 * mounts handed to overlayfs as /proc/self/fd paths (overlayfs keeps its own clones), so nothing stays
 * mounted besides the overlay, and the namespace can be closed once this returns.
 */
export async function mountIdmappedOverlay(userns: number, lowers: string[], layerDir: string, target: string): Promise<void> {
  const fds: number[] = [];
  try {
    for (const dir of [...lowers, layerDir]) fds.push(idmappedTree(dir, userns));
    const layer = `/proc/self/fd/${fds.at(-1)}`;
    const lowerdir = fds.slice(0, -1).map((fd) => `/proc/self/fd/${fd}`);
    const data = `lowerdir=${lowerdir.join(':')},upperdir=${layer}/upper,workdir=${layer}/work`;
    const rc = await new Promise<number>((resolve) => {
      // On a worker thread, so the event loop never waits on the kernel.
      mount.async('overlay', target, 'overlay', 0, data, (err: unknown, r: number) => resolve(err ? -1 : r));
    });
    // Again on this thread only to read errno for the message (koffi's errno is the calling thread's).
    if (rc !== 0 && mount('overlay', target, 'overlay', 0, data) !== 0) {
      throw new Error(`mounting the overlay at ${target} failed: ${strerror(koffi.errno())} (see dmesg)`);
    }
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

/**
 * Host id ranges of crun sandboxes, one per sandbox: range i is host ids `first + i * 65536` onward, so
 * no two sandboxes' roots (or other users) share a host uid, as Kubernetes gives each pod its own.
 * Kept below 2^31 (some tools read ids as signed) unless the configured start is above it.
 */
export class IdRanges {
  readonly first: number;
  readonly #count: number;
  /** Sandbox id -> the base of its range. */
  readonly #held = new Map<string, number>();

  constructor(first: number) {
    const limit = first < 2 ** 31 ? 2 ** 31 : 2 ** 32 - SANDBOX_IDS;
    if (!Number.isInteger(first) || first < SANDBOX_IDS || first % SANDBOX_IDS !== 0 || first + SANDBOX_IDS > limit) {
      throw new Error(`the sandbox id base must be a multiple of ${SANDBOX_IDS} from ${SANDBOX_IDS} to ${2 ** 32 - 2 * SANDBOX_IDS}, got ${first}`);
    }
    this.first = first;
    this.#count = Math.floor((limit - first) / SANDBOX_IDS);
  }

  /** Records the range a sandbox already runs in (read back after a restart). */
  adopt(id: string, base: number): void {
    this.#held.set(id, base);
  }

  /** A range no other sandbox holds. */
  acquire(id: string): number {
    const taken = new Set(this.#held.values());
    for (let i = 0; i < this.#count; i++) {
      const base = this.first + i * SANDBOX_IDS;
      if (!taken.has(base)) {
        this.#held.set(id, base);
        return base;
      }
    }
    throw new Error(`all ${this.#count} sandbox id ranges are in use`);
  }

  release(id: string): void {
    this.#held.delete(id);
  }

  /** The base of the range a sandbox holds. */
  baseOf(id: string): number | undefined {
    return this.#held.get(id);
  }
}

/**
 * `dir` as a detached mount (an open_tree clone) with the mount attributes `attrs`, idmapped through
 * `userns` when given (crun; gVisor's gofer serves files with their host ids); the caller closes it.
 */
export function idmappedTree(dir: string, userns: number | undefined, attrs = 0): number {
  const fd = openTree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (fd < 0) throw new Error(`open_tree ${dir}: ${strerror(koffi.errno())}`);
  if (userns === undefined && attrs === 0) return fd;
  const attr = { attr_set: (userns === undefined ? 0 : MOUNT_ATTR_IDMAP) | attrs, attr_clr: 0, propagation: 0, userns_fd: userns ?? 0 };
  if (mountSetattr(fd, '', AT_EMPTY_PATH, attr, 32) !== 0) {
    const msg = strerror(koffi.errno());
    closeSync(fd);
    throw new Error(`${userns === undefined ? 'setting the mount attributes of' : 'idmapping'} ${dir}: ${msg}${userns === undefined ? '' : ' (the file system must support idmapped mounts)'}`);
  }
  return fd;
}

/**
 * A user namespace mapping sandbox ids 0..65535 to host `base`.., opened as a file descriptor (the
 * caller closes it). Its
 * extra entry maps host root to id 65536 (outside what any sandbox has): overlayfs does its own work
 * (work dir, copy-up) with the mounter's credentials, host root, which an idmapped layer must be able
 * to store; files the host itself writes through a sandbox's root land owned by 65536, never by 0.
 */
export async function sandboxUserns(base: number): Promise<number> {
  // A process is the only way to make a namespace, and Node (threads) cannot unshare itself. Started
  // with posix_spawn off the event loop: a burst of creates forks no copies of the server's heap.
  let gone = false;
  let exited!: Promise<number>;
  const started = new Promise<number>((resolve) => {
    exited = spawnToLog('unshare', ['--user', '--', 'sleep', 'infinity'], '/dev/null', { onSpawn: resolve }).finally(() => (gone = true));
  });
  const pid = await Promise.race([started, exited.then(() => Promise.reject(new Error('could not start unshare')))]);
  try {
    const own = readlinkSync('/proc/self/ns/user');
    const deadline = performance.now() + 5000;
    while (gone || readlinkSync(`/proc/${pid}/ns/user`) === own) {
      if (gone || performance.now() > deadline) throw new Error('unshare --user did not create a user namespace');
      await new Promise((r) => setTimeout(r, 1));
    }
    const map = `0 ${base} ${SANDBOX_IDS}\n${SANDBOX_IDS} 0 1\n`;
    writeFileSync(`/proc/${pid}/uid_map`, map);
    writeFileSync(`/proc/${pid}/gid_map`, map);
    return openSync(`/proc/${pid}/ns/user`, 'r');
  } finally {
    process.kill(pid, 'SIGKILL');
    await exited.catch(() => undefined);
  }
}
