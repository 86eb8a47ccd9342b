import { readFileSync } from 'node:fs';
import { libc } from './libc.ts';

/**
 * The engines leave processes to run on their own: `runsc run -detach` and `crun run -d` exit, and the
 * sandbox, its gofer or a container's init are orphaned. Orphans go to the nearest subreaper, else to
 * the host's init, which must reap them when they exit: `runsc delete` waits until it has (1-2 s on
 * these hosts, whose init reaps that seldom; never in a Kubernetes pod, where the server itself is
 * init). A server runs under tini registered as a subreaper, which reaps them the moment they exit
 * (a delete: about 1.8 -> 0.12 s). Node cannot do it itself: libuv reaps only the children it started,
 * and a wait for any child would take theirs.
 */
export const REAPER = 'tini';

/** `argv` run under the reaper. */
export function underReaper(file: string, args: readonly string[]): { file: string; args: string[] } {
  return { file: REAPER, args: ['-s', '--', file, ...args] };
}

const prctl = libc.func('int prctl(int option, ...)');
const PR_SET_PDEATHSIG = 1;
const SIGKILL = 9;

/**
 * Under the reaper, the server dies with it: a reaper killed outright (SIGKILL cannot be passed on)
 * must not leave the server running without one. Elsewhere (a test's process, a shell) nothing changes.
 */
export function dieWithReaper(): void {
  const parent = process.ppid;
  const comm = (() => {
    try {
      return readFileSync(`/proc/${parent}/comm`, 'utf8').trim();
    } catch {
      return '';
    }
  })();
  if (comm !== REAPER) return;
  prctl(PR_SET_PDEATHSIG, 'unsigned long', SIGKILL);
  // The reaper may have died before the call: then no signal comes.
  if (process.ppid !== parent) process.exit(1);
}
