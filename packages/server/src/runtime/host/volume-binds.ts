import { closeSync } from 'node:fs';
import { chown, lstat, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import koffi from 'koffi';
import type { BindMount } from '../driver.ts';
import { idmappedTree } from './idmap.ts';
import { libc } from './libc.ts';
import { runQuiet } from './posix-spawn.ts';

/** The helper built next to the agent binary (packages/agent/mount-into.c). */
const MOUNT_INTO_FILE = 'sandpit-mount-into';

const AT_FDCWD = -100;
const MOVE_MOUNT_F_EMPTY_PATH = 0x4;
const MOUNT_ATTR_RDONLY = 0x1;
const MOUNT_ATTR_NOSUID = 0x2;
const MOUNT_ATTR_NODEV = 0x4;

const moveMount = libc.func('int move_mount(int from_dfd, const char *from_path, int to_dfd, const char *to_path, unsigned int flags)');
const strerror = libc.func('const char *strerror(int errnum)');

/**
 * Binds the volumes among `mounts` into a crun sandbox's root before it starts, each an idmapped view
 * (its user namespace `userns`) so files keep their sandbox ids on disk whatever range the sandbox
 * has, and several sandboxes share one volume. crun's OCI bind mounts are made as sandbox root, which
 * cannot reach the volume store (0700), and crun 1.8.1 cannot idmap a bind: so the host mounts them.
 * The mount point is made inside the root without following a symlink (nothing inside runs yet, so
 * none can appear meanwhile): a path through one is refused, never resolved on the host.
 */
export async function bindVolumes(userns: number, rootfs: string, sandboxRoot: number, mounts: readonly BindMount[]): Promise<void> {
  for (const m of volumesOuterFirst(mounts)) {
    const target = await mountPoint(rootfs, m.destination, sandboxRoot);
    attachTree(volumeTree(m, userns), target, m.destination);
  }
}

/** Attaches detached mount `fd` at host path `target` and closes it; `what` names it in an error. */
export function attachTree(fd: number, target: string, what: string): void {
  try {
    if (moveMount(fd, '', AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) !== 0) throw new Error(`mounting a volume at ${what}: ${strerror(koffi.errno())}`);
  } finally {
    closeSync(fd);
  }
}

/** The volume mounts among `mounts`, outer paths first, so a volume mounted inside another lands in it. */
export function volumesOuterFirst(mounts: readonly BindMount[]): BindMount[] {
  return mounts.filter((m) => m.volume).sort((a, b) => a.destination.length - b.destination.length);
}

/** The volume of `m` as a detached mount, idmapped through `userns` when given, nosuid, nodev and read-only when asked; the caller closes it. */
export function volumeTree(m: BindMount, userns: number | undefined): number {
  return idmappedTree(m.source, userns, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (m.volume?.readOnly ? MOUNT_ATTR_RDONLY : 0));
}

/** `dest` under `rootfs`, its missing directories made (owned by sandbox root), refusing any symlink or non-directory on the way. */
async function mountPoint(rootfs: string, dest: string, sandboxRoot: number): Promise<string> {
  let at = rootfs;
  for (const part of dest.split('/').filter(Boolean)) {
    if (part === '..' || part === '.') throw new Error(`volume path ${dest} is not normalized`);
    at = join(at, part);
    const st = await lstat(at).catch(() => undefined);
    if (!st) {
      await mkdir(at, { mode: 0o755 });
      await chown(at, sandboxRoot, sandboxRoot);
    } else if (st.isSymbolicLink()) {
      throw new Error(`volume path ${dest} goes through a symlink in the template; give a path without one`);
    } else if (!st.isDirectory()) {
      throw new Error(`volume path ${dest} goes through a file of the template that is not a directory`);
    }
  }
  return at;
}

/**
 * Attaches detached mount `tree` at `path` under the root of process `pid`, in its mount namespace,
 * missing directories made owned by `uid`, through the helper next to `agentBinary`; closes `tree`.
 */
export async function mountInto(agentBinary: string, pid: number, path: string, uid: number, tree: number): Promise<void> {
  try {
    await runQuiet(join(dirname(agentBinary), MOUNT_INTO_FILE), [String(pid), path, String(uid)], undefined, [tree]);
  } finally {
    closeSync(tree);
  }
}
