import { lstat, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runCaptured } from '../host/posix-spawn.ts';

/**
 * Copies of writable layers for snapshots and forks. On the btrfs layer store
 * they are subvolume snapshots (copy-on-write, milliseconds whatever the size);
 * elsewhere plain copies (reflinked where the filesystem can).
 */
export async function freezeLayer(src: string, dest: string, btrfs: boolean): Promise<void> {
  if (btrfs) await runCaptured('btrfs', ['subvolume', 'snapshot', '-r', src, dest]);
  else await runCaptured('cp', ['-a', '--reflink=auto', src, dest]);
}

/** A writable copy of a frozen layer, capped at diskMib; returns the btrfs subvolume id (for usage reads). */
export async function thawLayer(src: string, dest: string, btrfs: boolean, diskMib: number): Promise<number | undefined> {
  if (!btrfs) {
    await runCaptured('cp', ['-a', '--reflink=auto', src, dest]);
    return undefined;
  }
  await runCaptured('btrfs', ['subvolume', 'snapshot', src, dest]);
  const [, rootid] = await Promise.all([runCaptured('btrfs', ['qgroup', 'limit', String(diskMib * 1024 * 1024), dest]), runCaptured('btrfs', ['inspect-internal', 'rootid', dest])]);
  return Number(rootid.stdout.trim());
}

/** Removes a tree that may hold subvolumes (a snapshot's layer). */
export async function removeTree(path: string): Promise<void> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const p = join(path, e.name);
    // Inode 256 is the root of a btrfs subvolume; rm cannot remove a read-only one.
    if ((await stat(p).catch(() => undefined))?.ino === 256) await runCaptured('btrfs', ['subvolume', 'delete', p]);
  }
  await rm(path, { recursive: true, force: true });
}

/** Bytes a tree holds on disk (allocated blocks, hard links counted once). */
export async function treeBytes(path: string): Promise<number> {
  let total = 0;
  const seen = new Set<string>();
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = join(d, e.name);
      const st = await lstat(p).catch(() => undefined);
      if (!st) continue;
      const key = `${st.dev}:${st.ino}`;
      if (seen.has(key)) continue;
      seen.add(key);
      total += st.blocks * 512;
      if (e.isDirectory()) await walk(p);
    }
  };
  await walk(path);
  return total;
}
