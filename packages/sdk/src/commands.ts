import type { SandpitClient } from './client.ts';
import { type CommandOptions, type CommandResult, type ExecTarget, runCommand, type StreamOptions, type StreamResult, streamCommand } from './exec.ts';

/** Runs commands in one sandbox over the data plane, authenticated by the sandbox's access token. */
export class Commands {
  readonly #client: SandpitClient;
  readonly #sandboxId: string;
  readonly #accessToken: () => string;

  constructor(client: SandpitClient, sandboxId: string, accessToken: () => string) {
    this.#client = client;
    this.#sandboxId = sandboxId;
    this.#accessToken = accessToken;
  }

  /** Runs `command` to completion; output past 8 MiB is dropped and `truncated` set. */
  async run(command: string, opts: CommandOptions = {}): Promise<CommandResult> {
    const answer = await runCommand(this.#client.http, await this.#target(opts), command, opts);
    return { stdout: answer.stdout, stderr: answer.stderr, exitCode: answer.exit_code, truncated: answer.truncated === true };
  }

  /** Runs `command`, handing its output to `onStdout` and `onStderr` as it arrives; for unbounded output. */
  async stream(command: string, opts: StreamOptions = {}): Promise<StreamResult> {
    return streamCommand(this.#client.http, await this.#target(opts), command, opts);
  }

  /** Routed by header to the announced data-plane address, so no per-sandbox DNS name is needed. */
  async #target(opts: CommandOptions): Promise<ExecTarget> {
    return {
      path: '/exec',
      baseUrl: await this.#client.dataPlaneUrl({ signal: opts.signal }),
      headers: { 'x-platform-sandbox-id': this.#sandboxId, 'x-access-token': this.#accessToken() },
      apiKey: false,
    };
  }
}
