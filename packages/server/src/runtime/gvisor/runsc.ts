import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCaptured, spawnToLog } from '../host/posix-spawn.ts';
import { isZombie } from '../host/pids.ts';
import { runCommand } from '../host/run-command.ts';

export interface RunscState {
  id: string;
  pid: number;
  status: string;
}

/**
 * Hides /proc/sys/net from runsc: with --network=sandbox both builds in use
 * (20221219, 20240729) refuse to start on this kernel when they can read it (gVisor issue 10704).
 * The private mount namespace ends with runsc; "$@" keeps the arguments out of the shell.
 */
const HIDE_PROC_SYS_NET = 'mount -t tmpfs -o ro tmpfs /proc/sys/net && exec "$@"';

/** The name of runsc's state file of a container, in both builds in use (20221219, 20240729). */
const stateFileName = (id: string) => `${id}_sandbox:${id}.state`;
const STATE_FILE = /^(.+)_sandbox:\1\.state$/;

/**
 * One runsc binary with its state root and the flags this host needs: a
 * platform that works without kvm (kvm hangs here), host unix sockets openable
 * (the agent dials the host), and either netstack on the sandbox's namespace
 * or loopback only. run, restore and checkpoint must see the same flags.
 */
export class Runsc {
  readonly root: string;
  readonly binary: string;
  readonly platform: string;
  /** Flags beyond the legacy set (engines.ts): sandboxes created before they existed restore without them. */
  readonly #extra: string[];
  /** Flags of `checkpoint` alone (how the memory is stored). */
  readonly #checkpointFlags: string[];

  constructor(root: string, binary: string, platform: string, extra: string[] = [], checkpointFlags: string[] = []) {
    this.root = root;
    this.binary = binary;
    this.platform = platform;
    this.#extra = extra;
    this.#checkpointFlags = checkpointFlags;
  }

  flags(netns: boolean): string[] {
    return ['--root', this.root, `--platform=${this.platform}`, '--host-uds=open', `--network=${netns ? 'sandbox' : 'none'}`, ...this.#extra];
  }

  /** The program and arguments for a runsc call that creates a sandbox. */
  command(netns: boolean, args: string[]): [string, string[]] {
    const runsc = [this.binary, ...this.flags(netns), ...args];
    if (!netns) return [runsc[0]!, runsc.slice(1)];
    return ['unshare', ['--mount', '--propagation', 'private', '--', 'sh', '-c', HIDE_PROC_SYS_NET, 'sh', ...runsc]];
  }

  /** `run --detach`: the sandbox outlives us; its output (and runsc's errors) go to `logPath`, never to a pipe. */
  run(id: string, bundle: string, logPath: string, netns: boolean): Promise<void> {
    return this.#detached(netns, ['run', '--detach', '--bundle', bundle, id], logPath);
  }

  restore(id: string, bundle: string, image: string, logPath: string, netns: boolean): Promise<void> {
    return this.#detached(netns, ['restore', '--detach', '--image-path', image, '--bundle', bundle, id], logPath);
  }

  /**
   * Writes the checkpoint into `partial` and renames it to `image` only when
   * runsc succeeded. The rename is done by the same shell as runsc, so it
   * happens even when the server dies meanwhile; `pidFile` names that shell.
   * A successful save ends the sandbox; so does a failed one on a connected TCP endpoint (both builds in use).
   */
  async checkpoint(id: string, partial: string, image: string, pidFile: string, logPath: string): Promise<void> {
    await writeFile(logPath, '');
    let recorded: Promise<void> | undefined;
    const code = await spawnToLog(
      'sh',
      ['-c', 'p=$1; f=$2; shift 2; "$@" && mv -T -- "$p" "$f"', 'sh', partial, image, this.binary, '--root', this.root, 'checkpoint', ...this.#checkpointFlags, '--image-path', partial, id],
      logPath,
      { newSession: true, onSpawn: (pid) => (recorded = writeFile(pidFile, String(pid))) },
    );
    await recorded;
    if (code === 0) return;
    const text = await readFile(logPath, 'utf8').catch(() => '');
    throw new Error(`runsc checkpoint exited with code ${code}: ${lastError(text)}`);
  }

  /** `runsc state`, except that an exited sandbox process its parent has not reaped yet is stopped (20240729 says running until it is reaped). */
  async state(id: string): Promise<RunscState | undefined> {
    // Most sandboxes of a large host are paused, their runs deleted: a restart asks this of each, and
    // a runsc process per sandbox was most of its start-up (about 20 ms each).
    if (!(await this.#mayKnow(id))) return undefined;
    try {
      const { stdout } = await runCaptured(this.binary, ['--root', this.root, 'state', id]);
      const s = JSON.parse(stdout) as RunscState;
      return s.status === 'running' && (await isZombie(s.pid)) ? { ...s, status: 'stopped' } : s;
    } catch (err) {
      if (/does not exist|no such file|not found/i.test((err as Error).message)) return undefined;
      throw err;
    }
  }

  /**
   * Whether runsc may have a container `id`: false only when its state root is read, every state file
   * in it has the layout both builds in use write (`stateFileName`, as `sandboxPid` reads),
   * and none is this one's. Anything else (no root yet, an unknown layout) leaves the answer to runsc.
   */
  async #mayKnow(id: string): Promise<boolean> {
    const names = await readdir(this.root).catch(() => undefined);
    if (!names) return true;
    const states = names.filter((n) => n.endsWith('.state'));
    if (states.some((n) => !STATE_FILE.test(n))) return true;
    return states.includes(stateFileName(id));
  }

  /**
   * The sandbox process's pid from runsc's own state file (what `state`
   * reports, without starting a runsc process). The file's layout is
   * the same in both builds in use (20221219, 20240729); undefined when it does not match.
   */
  async sandboxPid(id: string): Promise<number | undefined> {
    return pidOf((await this.#stateFile(id))?.sandbox?.pid);
  }

  /** The gofer's pid from runsc's state file, as sandboxPid. */
  async goferPid(id: string): Promise<number | undefined> {
    return pidOf((await this.#stateFile(id))?.goferPid);
  }

  async #stateFile(id: string): Promise<{ sandbox?: { pid?: unknown }; goferPid?: unknown } | undefined> {
    const text = await readFile(join(this.root, stateFileName(id)), 'utf8').catch(() => '');
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  }

  /** Runs a command in the sandbox to completion (root); used for checks, not for user commands. */
  async exec(id: string, argv: string[]): Promise<string> {
    return (await runCaptured(this.binary, ['--root', this.root, 'exec', id, ...argv])).stdout;
  }

  async kill(id: string): Promise<void> {
    await runCaptured(this.binary, ['--root', this.root, 'kill', '--all', id, 'KILL']).catch(() => undefined);
  }

  async deleteForce(id: string): Promise<void> {
    try {
      await runCaptured(this.binary, ['--root', this.root, 'delete', '--force', id]);
    } catch (err) {
      if (/does not exist|no such file|not found/i.test((err as Error).message)) return;
      throw err;
    }
  }

  /** The containers in this state root: what `runsc list` reads (its state files), without starting a runsc process. */
  async list(): Promise<string[]> {
    const names = await readdir(this.root).catch(() => []);
    return names.flatMap((n) => /^(.+)_sandbox:.+\.state$/.exec(n)?.[1] ?? []);
  }

  async #detached(netns: boolean, args: string[], logPath: string): Promise<void> {
    const [file, argv] = this.command(netns, args);
    // posix_spawn: Node's fork of the server would block the event loop on every start and restore.
    const code = await spawnToLog(file, argv, logPath, { newSession: true });
    if (code === 0) return;
    const text = await readFile(logPath, 'utf8').catch(() => '');
    throw new Error(`runsc ${args[0]} exited with code ${code}: ${lastError(text)}`);
  }
}

/** The last meaningful line runsc wrote (its errors end the log). */
function lastError(text: string): string {
  const lines = text
    .trim()
    .split('\n')
    .filter((l) => l.trim() !== '');
  return (lines.at(-1) ?? '').slice(0, 500);
}

/** Can this runsc start a sandbox here? Runs `runsc do true` once. */
export async function probeRunsc(binary: string, platform: string, stateRoot: string): Promise<true | string> {
  if (process.getuid?.() !== 0) return 'runsc needs root';
  try {
    // `runsc do` enters the caller's working directory inside the sandbox: '/' is one every host has.
    await runCommand(binary, ['--root', stateRoot, `--platform=${platform}`, '--network=none', 'do', '/bin/true'], { cwd: '/' });
    return true;
  } catch (err) {
    return `runsc cannot run a sandbox here: ${(err as Error).message.split('\n')[0]}`;
  }
}

const pidOf = (pid: unknown): number | undefined => (typeof pid === 'number' && pid > 0 ? pid : undefined);
