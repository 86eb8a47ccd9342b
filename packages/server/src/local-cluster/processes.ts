import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isAlive } from '../runtime/host/pids.ts';
import { underReaper } from '../runtime/host/reaper.ts';

/** A process the cluster started: its PID and start time, which together name it even after the PID is reused. */
export interface ProcessRef {
  pid: number;
  startTicks: string;
}

/** The `sandpit` CLI of this checkout: every member runs its `serve`. */
const CLI = new URL('../../../cli/src/main.ts', import.meta.url).pathname;

/** The fields of /proc/<pid>/stat after the command name, which may hold spaces and parentheses. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Whether the process still runs: same start time (field 22; a reused PID has another), not a zombie. */
export function running(ref: ProcessRef): boolean {
  if (!isAlive(ref.pid)) return false;
  const fields = statFields(ref.pid);
  return fields !== undefined && fields[0] !== 'Z' && fields[19] === ref.startTicks;
}

/** Starts `sandpit serve` under the reaper, detached (its own session, so it outlives the launcher), output appended to `log`; the reference is the reaper's, which passes signals on. */
export async function launch(env: NodeJS.ProcessEnv, log: string): Promise<ProcessRef> {
  await mkdir(dirname(log), { recursive: true });
  const fd = openSync(log, 'a');
  try {
    const { file, args } = underReaper(process.execPath, [CLI, 'serve']);
    const child = spawn(file, args, { env, detached: true, stdio: ['ignore', fd, fd] });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`could not start sandpit serve (see ${log})`);
    child.unref();
    const ticks = statFields(pid)?.[19];
    if (ticks === undefined) throw new Error(`sandpit serve exited at once (see ${log})`);
    return { pid, startTicks: ticks };
  } finally {
    closeSync(fd);
  }
}

/** SIGTERM, then SIGKILL once `graceMs` has passed; resolves when the process is gone. */
export async function terminate(ref: ProcessRef, graceMs: number): Promise<void> {
  if (!running(ref)) return;
  process.kill(ref.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (running(ref) && Date.now() < deadline) await sleep(100);
  if (!running(ref)) return;
  process.kill(ref.pid, 'SIGKILL');
  // Only a process stuck in the kernel (uninterruptible sleep) outlives SIGKILL for long: say so rather than hang.
  const killDeadline = Date.now() + KILL_WAIT_MS;
  while (running(ref)) {
    if (Date.now() > killDeadline) throw new Error(`pid ${ref.pid} is still there ${KILL_WAIT_MS / 1000} s after SIGKILL`);
    await sleep(50);
  }
}

const KILL_WAIT_MS = 10_000;

/** Sends a signal if the process still runs (SIGKILL stands for a crashed member in tests). */
export function signal(ref: ProcessRef, sig: NodeJS.Signals): void {
  if (running(ref)) process.kill(ref.pid, sig);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
