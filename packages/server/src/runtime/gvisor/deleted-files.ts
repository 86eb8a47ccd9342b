import { CaptureRefused } from '../driver.ts';
import type { SandboxProcesses } from './process-descriptors.ts';

export interface HeldDeletedFile {
  pid: string;
  path: string;
}

/**
 * Files a process holds open after they were deleted, on the sandbox's own file systems: this runsc's
 * save panics on one ("deleted and invalidated dentries can't be restored") and the sandbox ends.
 * Python's `tempfile.TemporaryFile()`, C's `tmpfile()` and R's `-e` make them. What lives in memory
 * is saved with it and is left out: /dev and /dev/shm (tmpfs), memfd files.
 * `descriptors`: lines of `/proc/<pid>/fd <target>`.
 */
export function heldDeletedFiles(descriptors: string): HeldDeletedFile[] {
  const held: HeldDeletedFile[] = [];
  for (const line of descriptors.split('\n')) {
    const m = /^\/proc\/(\d+)\/fd (\/.*) \(deleted\)$/.exec(line);
    if (!m) continue;
    const path = m[2]!;
    if (path.startsWith('/dev/') || path.startsWith('/memfd:')) continue;
    held.push({ pid: m[1]!, path });
  }
  return held;
}

/** Refuses (CaptureRefused) a save while a process holds a deleted file gVisor cannot save; the sandbox keeps running. */
export async function refuseHeldDeletedFiles(processes: SandboxProcesses): Promise<void> {
  const held = heldDeletedFiles(await processes.descriptors());
  if (held.length === 0) return;
  const first = held.slice(0, 3);
  const names = await Promise.all(first.map(async (h) => `${h.path} (process ${await processes.name(h.pid)})`));
  throw new CaptureRefused(
    `the sandbox holds ${held.length} deleted file(s) open: ${names.join(', ')}${held.length > 3 ? ', ...' : ''}; gVisor cannot save an open file that was deleted without ending the sandbox: close it, or keep such files in /dev/shm, and retry`,
  );
}
