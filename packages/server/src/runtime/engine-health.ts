import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isAlive } from './host/pids.ts';

/**
 * What became of a running sandbox's engine, as cheap to learn as a signal 0: `alive`, or gone
 * (`exited`, or `out_of_memory` when the host's OOM killer acted in its memory cgroup), or
 * `unknown` when the engine has no process to look at (starting, paused, or already gone from disk).
 */
export type EngineHealth = 'alive' | 'exited' | 'out_of_memory' | 'unknown';

export async function pidHealth(pid: number | undefined, memoryCgroupDir: string | undefined): Promise<EngineHealth> {
  if (pid === undefined) return 'unknown';
  if (isAlive(pid)) return 'alive';
  if (memoryCgroupDir) {
    const control = await readFile(join(memoryCgroupDir, 'memory.oom_control'), 'utf8').catch(() => '');
    if (Number(/^oom_kill (\d+)$/m.exec(control)?.[1] ?? 0) > 0) return 'out_of_memory';
  }
  return 'exited';
}
