import { ConnectionError } from './errors.ts';
import type { HttpClient, RequestOptions } from './http.ts';
import { readSse } from './sse.ts';
import type { DataExecAnswer, ExecParams, ExecStreamEvent } from './types.ts';

export interface CommandOptions extends RequestOptions {
  /** When given, `command` is the binary and these its arguments, with no shell; otherwise `command` runs under /bin/sh -c. */
  args?: string[];
  /** Environment variables for this command. */
  env?: Record<string, string>;
  /** Working directory (default /home/user). */
  cwd?: string;
  /** The command's time limit in seconds (default 30); at the limit its process group is killed and the exit code is 124. */
  timeoutS?: number;
}

export interface StreamOptions extends CommandOptions {
  onStdout?: (chunk: string) => void;
  onStderr?: (chunk: string) => void;
  /** The stream fails with TimeoutError when nothing, not even a keepalive (every 15 s), arrives for this long (default 45 000). */
  idleTimeoutMs?: number;
}

/** A command run to completion. A non-zero exit code is a result, not an error. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export interface CommandResult extends ExecResult {
  /** True when stdout and stderr together exceeded 8 MiB and the tail was dropped (use stream for unbounded output). */
  truncated: boolean;
}

export interface StreamResult {
  exitCode: number;
  /** Why the command itself failed, when it did (for example its time limit). */
  error?: string;
}

/** Where a command is sent: the control plane (API key) or the data plane (access token). */
export interface ExecTarget {
  path: string;
  baseUrl?: string;
  headers?: Record<string, string>;
  apiKey?: false;
}

const DEFAULT_COMMAND_TIMEOUT_S = 30;
/** Time beyond the command's own limit for the sandbox to answer (auto-resume included). */
const ANSWER_SLACK_MS = 60_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 45_000;

function execBody(command: string, opts: CommandOptions): ExecParams {
  const body: ExecParams = { command };
  if (opts.args) body.args = opts.args;
  if (opts.env) body.env = opts.env;
  if (opts.cwd) body.working_dir = opts.cwd;
  if (opts.timeoutS !== undefined) body.timeout_s = opts.timeoutS;
  return body;
}

/** Runs a command to completion; the call's deadline follows the command's own limit unless set. */
export function runCommand(http: HttpClient, target: ExecTarget, command: string, opts: CommandOptions = {}): Promise<DataExecAnswer> {
  const timeoutMs = opts.timeoutMs ?? (opts.timeoutS ?? DEFAULT_COMMAND_TIMEOUT_S) * 1000 + ANSWER_SLACK_MS;
  return http.json<DataExecAnswer>({ method: 'POST', ...target, body: execBody(command, opts), timeoutMs, signal: opts.signal });
}

/** Runs a command over exec/stream, handing each output chunk to the callbacks as it arrives. */
export async function streamCommand(http: HttpClient, target: ExecTarget, command: string, opts: StreamOptions = {}): Promise<StreamResult> {
  const path = `${target.path}/stream`;
  const opened = await http.stream({ method: 'POST', ...target, path, body: execBody(command, opts), timeoutMs: opts.timeoutMs, signal: opts.signal });
  return followOutput(opened, opts, `POST ${path}`);
}

/** Reads a stream of exec events (a command's or a background process's) to its final event. */
export async function followOutput(
  opened: { body: ReadableStream<Uint8Array>; controller: AbortController },
  opts: Pick<StreamOptions, 'onStdout' | 'onStderr' | 'idleTimeoutMs' | 'signal'>,
  what: string,
): Promise<StreamResult> {
  const events = readSse(opened.body, { idleTimeoutMs: opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, controller: opened.controller, signal: opts.signal, what });
  for await (const raw of events) {
    const event = raw as ExecStreamEvent;
    if (event.stdout) opts.onStdout?.(event.stdout);
    if (event.stderr) opts.onStderr?.(event.stderr);
    if (event.finished) {
      const result: StreamResult = { exitCode: event.exit_code ?? -1 };
      if (event.error) result.error = event.error;
      return result;
    }
  }
  throw new ConnectionError(`${what}: the stream ended before the command finished`);
}
