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

/** The pid a pid file holds (0 when it is empty); rejects when the file cannot be read. */
export async function readPidFile(path: string): Promise<number> {
  return Number((await readFile(path, 'utf8')).trim());
}

/** Whether `pid` has exited and waits for its parent to reap it. */
export async function isZombie(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
}

/** Resolves once `pid` has exited (a zombie counts as exited) or `ms` have passed. */
export async function waitForExit(pid: number, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (isAlive(pid) && !(await isZombie(pid)) && performance.now() < deadline) await sleep(20);
}
