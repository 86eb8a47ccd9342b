import type { DataPlane } from './data-plane.ts';
import { type CommandOptions, type CommandResult, type ExecTarget, runCommand, type StreamOptions, type StreamResult, streamCommand } from './exec.ts';

/** Runs commands in one sandbox over the data plane, authenticated by the sandbox's access token. */
export class Commands {
  readonly #plane: DataPlane;

  constructor(plane: DataPlane) {
    this.#plane = plane;
  }

  /** Runs `command` to completion; output past 8 MiB is dropped and `truncated` set. */
  async run(command: string, opts: CommandOptions = {}): Promise<CommandResult> {
    const answer = await runCommand(this.#plane.client.http, await this.#target(opts), command, opts);
    return { stdout: answer.stdout, stderr: answer.stderr, exitCode: answer.exit_code, truncated: answer.truncated === true };
  }

  /** Runs `command`, handing its output to `onStdout` and `onStderr` as it arrives; for unbounded output. */
  async stream(command: string, opts: StreamOptions = {}): Promise<StreamResult> {
    return streamCommand(this.#plane.client.http, await this.#target(opts), command, opts);
  }

  async #target(opts: CommandOptions): Promise<ExecTarget> {
    return { path: '/exec', ...(await this.#plane.target(opts)) };
  }
}
