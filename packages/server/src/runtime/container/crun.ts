import { readdir } from 'node:fs/promises';
import { runCaptured, spawnToLog } from '../host/posix-spawn.ts';

export interface CrunState {
  id: string;
  pid: number;
  status: string;
}

/** Thin wrappers over the crun CLI, always with our own state root. */
export class Crun {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  /**
   * `crun run --detach`: the container outlives us (crun reparents it), and
   * its stdout/stderr (and crun's own errors) go to `logPath`, never to a pipe
   * that would break when the server exits.
   */
  async runDetached(id: string, bundle: string, pidFile: string, logPath: string): Promise<void> {
    const code = await spawnToLog('crun', ['--root', this.root, 'run', '--detach', '--pid-file', pidFile, '--bundle', bundle, id], logPath);
    if (code !== 0) throw new Error(`crun run exited with code ${code}`);
  }

  async state(id: string): Promise<CrunState | undefined> {
    try {
      const { stdout } = await runCaptured('crun', ['--root', this.root, 'state', id]);
      return JSON.parse(stdout) as CrunState;
    } catch (err) {
      if (/does not exist|No such file/i.test((err as Error).message)) return undefined;
      throw err;
    }
  }

  async deleteForce(id: string): Promise<void> {
    try {
      await runCaptured('crun', ['--root', this.root, 'delete', '--force', id]);
    } catch (err) {
      if (/does not exist|No such file/i.test((err as Error).message)) return;
      throw err;
    }
  }

  /** Container ids crun keeps state for (one directory each under its root). */
  async list(): Promise<string[]> {
    const entries = await readdir(this.root, { withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  }
}
