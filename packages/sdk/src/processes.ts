import type { DataPlane } from './data-plane.ts';
import { NotFoundError } from './errors.ts';
import { followOutput, type StreamResult } from './exec.ts';
import type { RequestOptions } from './http.ts';
import type { ProcessInfo, ProcessOutput, StartProcessParams } from './types.ts';

export interface StartProcessOptions extends RequestOptions {
  /** When given, the command is the binary and these its arguments, with no shell; otherwise it runs under /bin/sh -c. */
  args?: string[];
  env?: Record<string, string>;
  /** Working directory (default /home/user). */
  cwd?: string;
}

export interface FollowOptions extends RequestOptions {
  onStdout?: (chunk: string) => void;
  onStderr?: (chunk: string) => void;
  /** The stream fails with TimeoutError when nothing, not even a keepalive (every 15 s), arrives for this long (default 45 000). */
  idleTimeoutMs?: number;
}

const at = (id: string | number) => `/processes/${encodeURIComponent(String(id))}`;

/** Base64 with web APIs only: btoa over a binary string, built in slices to bound the argument count. */
function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * Background processes in one sandbox over the data plane: they outlive the request, disconnects and
 * pause/resume. Ids are the process id or its pid.
 */
export class Processes {
  readonly #plane: DataPlane;

  constructor(plane: DataPlane) {
    this.#plane = plane;
  }

  /** Starts a process and returns at once (BadRequestError when the binary or cwd is missing). */
  start(command: string, opts: StartProcessOptions = {}): Promise<ProcessInfo> {
    const { args, env, cwd, ...request } = opts;
    const body: StartProcessParams = { command };
    if (args) body.args = args;
    if (env) body.env = env;
    if (cwd) body.working_dir = cwd;
    return this.#plane.json({ method: 'POST', path: '/processes', body, ...request });
  }

  /** Running processes and recently exited ones. */
  async list(opts: RequestOptions = {}): Promise<ProcessInfo[]> {
    return (await this.#plane.json<{ processes: ProcessInfo[] }>({ method: 'GET', path: '/processes', ...opts })).processes;
  }

  get(id: string | number, opts: RequestOptions = {}): Promise<ProcessInfo> {
    return this.#plane.json({ method: 'GET', path: at(id), ...opts });
  }

  /** Output so far: the last 1 MiB of stdout and stderr together (`dropped_bytes` counts the rest). */
  output(id: string | number, opts: RequestOptions = {}): Promise<ProcessOutput> {
    return this.#plane.json({ method: 'GET', path: `${at(id)}/output`, ...opts });
  }

  /**
   * Follows the output (the kept output first, then live) until the process exits; returns its exit
   * code. Stopping early (the signal) leaves the process running.
   */
  async stream(id: string | number, opts: FollowOptions = {}): Promise<StreamResult> {
    const path = `${at(id)}/stream`;
    const opened = await this.#plane.stream({ method: 'GET', path, timeoutMs: opts.timeoutMs, signal: opts.signal });
    return followOutput(opened, opts, `GET ${path}`);
  }

  /** Writes to stdin (text as UTF-8, bytes as they are); `eof` closes stdin after it. ConflictError once the process has exited. */
  sendStdin(id: string | number, data: string | Uint8Array, opts: RequestOptions & { eof?: boolean } = {}): Promise<void> {
    const { eof, ...request } = opts;
    const body = typeof data === 'string' ? { data } : { data: base64(data), encoding: 'base64' as const };
    return this.#plane.json({ method: 'POST', path: `${at(id)}/stdin`, body: eof === undefined ? body : { ...body, eof }, ...request });
  }

  /** Signals the process group: a name (`SIGTERM`, `TERM`) or a number. */
  signal(id: string | number, signal: string | number, opts: RequestOptions = {}): Promise<void> {
    return this.#plane.json({ method: 'POST', path: `${at(id)}/signal`, body: { signal }, ...opts });
  }

  /** SIGKILLs the whole process group if it runs, and forgets the process; false when it was already gone. */
  async kill(id: string | number, opts: RequestOptions = {}): Promise<boolean> {
    try {
      await this.#plane.json({ method: 'DELETE', path: at(id), ...opts });
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }
}
