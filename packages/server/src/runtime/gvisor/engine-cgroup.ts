import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { CgroupV1 } from '../host/cgroups.ts';

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

/**
 * runsc takes the sandbox's CPU count (`--cpu-num`, what nproc and /proc/cpuinfo show inside) from its
 * cgroup's cpuset when it boots, which the spec pins to vcpu_count CPUs. Once booted the count is fixed,
 * so the engine is let onto every CPU again: pinned, a burst of sandboxes queues on the CPUs their ids
 * picked while others idle. The CFS quota still holds the sandbox to vcpu_count CPUs of time.
 */
export async function unpinEngine(cg: CgroupV1, runscId: string): Promise<void> {
  // Without a cpuset hierarchy nothing was pinned.
  if (!cg.controllers.has('cpuset')) return;
  const dir = cg.dir('cpuset', runscId);
  await writeFile(join(dir, 'cpuset.cpus'), await readFile(join(dirname(dir), 'cpuset.cpus'), 'utf8'));
}
