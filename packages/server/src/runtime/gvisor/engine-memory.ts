import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CgroupV1 } from '../container/cgroups.ts';

/**
 * The host memory the engine itself needs beside the sandbox's own memory: the sentry's heap,
 * page tables of its stub processes, the gofer.
 */
export function engineHeadroomBytes(sandboxBytes: number): number {
  return 256 * 1024 * 1024 + Math.floor(sandboxBytes / 8);
}

/**
 * runsc sets the host cgroup's memory limit to the sandbox's memory, which is also the memory the
 * sandbox sees (MemTotal). The sentry and gofer live in that cgroup too, and gVisor has no OOM killer:
 * at the limit the host kills the sentry and the whole sandbox. Raised by the engine's headroom, the
 * limit is met only after the agent's OOM guard has killed the offending process inside.
 */
export async function raiseEngineMemory(cg: CgroupV1, runscId: string): Promise<void> {
  const file = join(cg.dir('memory', runscId), 'memory.limit_in_bytes');
  const sandboxBytes = Number((await readFile(file, 'utf8')).trim());
  // An unlimited group (no limit in the spec) has nothing to raise.
  if (!(sandboxBytes > 0 && sandboxBytes < 2 ** 52)) return;
  await writeFile(file, String(sandboxBytes + engineHeadroomBytes(sandboxBytes)));
}
