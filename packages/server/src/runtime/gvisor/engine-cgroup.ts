import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CgroupV1 } from '../host/cgroups.ts';

/**
 * The host memory the engine itself needs beside the sandbox's own memory: the sentry's heap,
 * page tables of its stub processes, the gofer.
 */
export function engineHeadroomBytes(sandboxBytes: number): number {
  return 256 * 1024 * 1024 + Math.floor(sandboxBytes / 8);
}

/**
 * runsc sets the host cgroup's memory limit to the sandbox's memory, and tells the sandbox that limit as
 * its MemTotal when it starts the engine's process. The sentry and gofer live in that cgroup too, and
 * gVisor has no OOM killer: at the limit the host kills the sentry and the whole sandbox. Raised by the
 * engine's headroom, the limit is met only after the agent's OOM guard has killed the offending process inside.
 */
async function raiseEngineMemory(cg: CgroupV1, runscId: string, sandboxBytes: number): Promise<void> {
  const file = join(cg.dir('memory', runscId), 'memory.limit_in_bytes');
  const want = sandboxBytes + engineHeadroomBytes(sandboxBytes);
  if (Number((await readFile(file, 'utf8')).trim()) >= want) return;
  await writeFile(file, String(want));
}

/** The engine's memory use in bytes; 0 while there is no cgroup. */
async function engineUsage(cg: CgroupV1, runscId: string): Promise<number> {
  const text = await readFile(join(cg.dir('memory', runscId), 'memory.usage_in_bytes'), 'utf8').catch(() => '0');
  return Number(text.trim()) || 0;
}

const RAISE_POLL_MS = 5;

/**
 * Runs `launch` (runsc run or restore), raising the engine's memory before runsc returns once the engine
 * uses half the sandbox's memory. A restore loads the sandbox's whole memory meanwhile, and with the
 * sentry's own a nearly full sandbox crossed its limit: measured, a 1 GiB sandbox with 50 MB free had its
 * sentry killed by the host on its second restore. The engine reads the limit as the sandbox's MemTotal
 * while it boots, with little memory in use: raised any earlier (in the spec, or as soon as the cgroup
 * exists), the sandbox saw the headroom as its own.
 */
export async function withEngineMemory(cg: CgroupV1, runscId: string, sandboxBytes: number, launch: () => Promise<void>): Promise<void> {
  let done = false;
  const raising = (async () => {
    while (!done && (await engineUsage(cg, runscId)) < sandboxBytes / 2) await sleep(RAISE_POLL_MS);
    if (!done) await raiseEngineMemory(cg, runscId, sandboxBytes);
  })();
  try {
    await launch();
  } finally {
    done = true;
    await raising.catch(() => undefined);
  }
  await raiseEngineMemory(cg, runscId, sandboxBytes);
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
