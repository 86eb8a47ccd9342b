import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { libc } from './libc.ts';
import { isAlive } from './pids.ts';

// Node forks to spawn: with the server's heap that blocks the event loop for each child, several
// times per sandbox start. posix_spawn (vfork in glibc) does not copy the heap (docs/host-timings.md).
const faInit = libc.func('int posix_spawn_file_actions_init(void *fa)');
const faAddOpen = libc.func('int posix_spawn_file_actions_addopen(void *fa, int fd, const char *path, int oflag, int mode)');
const faAddDup2 = libc.func('int posix_spawn_file_actions_adddup2(void *fa, int fd, int newfd)');
const faDestroy = libc.func('int posix_spawn_file_actions_destroy(void *fa)');
const attrInit = libc.func('int posix_spawnattr_init(void *attr)');
const attrSetFlags = libc.func('int posix_spawnattr_setflags(void *attr, short flags)');
const attrDestroy = libc.func('int posix_spawnattr_destroy(void *attr)');
const spawnp = libc.func('int posix_spawnp(_Out_ int *pid, const char *file, void *fa, void *attr, const char **argv, const char **envp)');
const waitpid = libc.func('int waitpid(int pid, _Out_ int *status, int options)');

// Each child is reaped by a blocking waitpid on a libuv pool thread. With the default 4 threads, a few
// slow children (runsc delete waits seconds) starve the server's file I/O (docs/host-timings.md).
// Read when the pool first starts, which is after every static import has run.
process.env.UV_THREADPOOL_SIZE ??= '64';

const O_WRONLY = 0o1;
const O_CREAT = 0o100;
const O_APPEND = 0o2000;
/** glibc's posix_spawn_file_actions_t is 80 bytes on x86_64; a little slack. */
const FILE_ACTIONS_BYTES = 128;
/** glibc's posix_spawnattr_t is 336 bytes on x86_64. */
const ATTR_BYTES = 384;
/** glibc's POSIX_SPAWN_SETSID. */
const SETSID = 0x80;

export interface SpawnOptions {
  /** Start the child in a session of its own, so a signal to the server's process group (Ctrl-C) never reaches it. */
  newSession?: boolean;
  /** Where stderr goes (appended); default: with stdout. */
  errPath?: string;
  /** Told the child's pid once it runs. */
  onSpawn?: (pid: number) => void;
  /** Descriptors the child gets as its fds 3, 4, ... (each must be above 2, or already where it goes). */
  fds?: readonly number[];
}

/** Runs `file` with stdin read from `stdinPath` and stdout+stderr appended to `outPath`; resolves with its exit code. */
export async function spawnWithFiles(file: string, args: readonly string[], stdinPath: string, outPath: string, opts: SpawnOptions = {}): Promise<number> {
  const fa = Buffer.alloc(FILE_ACTIONS_BYTES);
  faInit(fa);
  const attr = opts.newSession ? Buffer.alloc(ATTR_BYTES) : null;
  if (attr) {
    attrInit(attr);
    attrSetFlags(attr, SETSID);
  }
  const pid = [0];
  let rc: number;
  try {
    faAddOpen(fa, 0, stdinPath, 0, 0);
    faAddOpen(fa, 1, outPath, O_WRONLY | O_CREAT | O_APPEND, 0o644);
    if (opts.errPath) faAddOpen(fa, 2, opts.errPath, O_WRONLY | O_CREAT | O_APPEND, 0o644);
    else faAddDup2(fa, 1, 2);
    for (const [i, fd] of (opts.fds ?? []).entries()) faAddDup2(fa, fd, 3 + i);
    const env = Object.entries(process.env).map(([k, v]) => `${k}=${v}`);
    // On a pool thread: posix_spawn returns only once the child has exec'd, which takes tens of ms on
    // a busy host, and on the main thread that stalled every request (docs/host-timings.md).
    rc = await new Promise<number>((resolve, reject) => {
      spawnp.async(pid, file, fa, attr, [file, ...args, null], [...env, null], (err: unknown, r: number) => (err ? reject(err) : resolve(r)));
    });
  } finally {
    faDestroy(fa);
    if (attr) attrDestroy(attr);
  }
  if (rc !== 0) throw new Error(`cannot start ${file} (posix_spawn error ${rc})`);
  opts.onSpawn?.(pid[0]!);
  return new Promise((resolve, reject) => {
    const status = [0];
    // Blocks a worker thread, not the event loop; libuv reaps only children it started, so this one is ours.
    waitpid.async(pid[0], status, 0, (err: unknown, r: number) => {
      if (err || r < 0) reject(err instanceof Error ? err : new Error(`waitpid for ${file} failed`));
      else {
        const st = status[0] ?? 0;
        // Killed by a signal: the shell's 128+n, never a false 0.
        resolve(st & 0x7f ? 128 + (st & 0x7f) : (st >> 8) & 0xff);
      }
    });
  });
}

/** `file` with stdin from /dev/null and its output appended to `logPath`. */
export function spawnToLog(file: string, args: readonly string[], logPath: string, opts: SpawnOptions = {}): Promise<number> {
  return spawnWithFiles(file, args, '/dev/null', logPath, opts);
}

let seq = 0;
let swept = false;

/** Temporary files of a server that was killed mid-command are removed by the next one. */
async function sweepDeadTempFiles(): Promise<void> {
  swept = true;
  for (const name of await readdir(tmpdir()).catch(() => [])) {
    const pid = /^sandpit-cmd-(\d+)-\d+\.(in|out|err)$/.exec(name)?.[1];
    if (pid === undefined || isAlive(Number(pid))) continue;
    await rm(join(tmpdir(), name), { force: true });
  }
}

/**
 * Runs a command whose output matters only when it fails; `stdin` is fed from a temporary file,
 * `fds` become its fds 3, 4, ...
 */
export async function runQuiet(file: string, args: readonly string[], stdin?: string, fds?: readonly number[]): Promise<void> {
  await runWithTempFiles(file, args, stdin, false, fds);
}

/**
 * Runs a command to completion and returns its output (the hot-path twin of runCommand);
 * rejects with its stderr when it exits non-zero. `stdin` is fed from a temporary file.
 */
export function runCaptured(file: string, args: readonly string[], stdin?: string): Promise<{ stdout: string; stderr: string }> {
  return runWithTempFiles(file, args, stdin, true);
}

/** Output is read back when `keep` asks for it or the command failed (for the error). */
async function runWithTempFiles(file: string, args: readonly string[], stdin: string | undefined, keep: boolean, fds?: readonly number[]): Promise<{ stdout: string; stderr: string }> {
  if (!swept) void sweepDeadTempFiles();
  const base = join(tmpdir(), `sandpit-cmd-${process.pid}-${seq++}`);
  const inPath = stdin === undefined ? '/dev/null' : `${base}.in`;
  const [outPath, errPath] = [`${base}.out`, `${base}.err`];
  try {
    if (stdin !== undefined) await writeFile(inPath, stdin, { mode: 0o600 });
    const code = await spawnWithFiles(file, args, inPath, outPath, { errPath, fds });
    if (code === 0 && !keep) return { stdout: '', stderr: '' };
    const [stdout = '', stderr = ''] = await Promise.all([outPath, errPath].map((p) => readFile(p, 'utf8').catch(() => '')));
    if (code !== 0) {
      const detail = (stderr.trim() || stdout.trim()).split('\n').slice(-8).join('\n').slice(0, 2000);
      throw new Error(`${file} ${args.join(' ')} failed (exit code ${code})${detail ? `: ${detail}` : ''}`);
    }
    return { stdout, stderr };
  } finally {
    await Promise.all([rm(outPath, { force: true }), rm(errPath, { force: true }), stdin === undefined ? undefined : rm(inPath, { force: true })]);
  }
}
