import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether a process with this pid exists (signal 0 only checks; EPERM means it exists, owned by another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Resolves once `pid` has exited (a zombie counts as exited) or `ms` have passed. */
export async function waitForExit(pid: number, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  const gone = async () => !isAlive(pid) || / Z /.test(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ' Z '));
  while (!(await gone()) && performance.now() < deadline) await sleep(20);
}
