import { chmod, lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The file that keeps a sandbox's /tmp from being empty when it boots. */
const MARKER = '.sandpit-tmp-on-disk';

/**
 * runsc mounts a tmpfs of the sandbox's memory over /tmp when it boots a root whose /tmp is empty
 * (and does not when it is not). Such a /tmp loses its files on a disk-only pause, counts against
 * memory instead of disk_mib, is missing from the sandbox's changes, and whether a sandbox got one
 * depended on whether anything had ever written into its template's /tmp. A file in it keeps /tmp on
 * the sandbox's disk, as under crun. Run on the mounted root right before every `runsc run` (a
 * restore keeps the mounts of its checkpoint).
 */
export async function keepTmpOnDisk(rootfs: string): Promise<void> {
  const tmp = join(rootfs, 'tmp');
  const st = await lstat(tmp).catch(() => undefined);
  if (st && !st.isDirectory()) return;
  if (!st) {
    await mkdir(tmp);
    await chmod(tmp, 0o1777);
  } else if ((await readdir(tmp)).length > 0) return;
  await writeFile(join(tmp, MARKER), 'Keeps /tmp on the sandbox disk: gVisor mounts a memory tmpfs over an empty /tmp.\n', { mode: 0o444 });
}
