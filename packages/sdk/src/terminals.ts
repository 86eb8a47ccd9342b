import type { DataPlane } from './data-plane.ts';
import { ApiError, ConfigurationError, ConnectionError, NotFoundError, SandpitError, TimeoutError } from './errors.ts';
import type { RequestOptions } from './http.ts';
import type { CreateTerminalParams, TerminalInfo } from './types.ts';

export interface CreateTerminalOptions extends RequestOptions {
  cols?: number;
  rows?: number;
  /** Default: the login shell `bash -l`. Run by /bin/sh -c unless `args` is given. */
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
}

export interface TerminalExit {
  exitCode: number;
  /** The signal that ended the process, when one did. */
  signal: number | null;
}

type Listener<T> = (value: T) => void;

/** Node's WebSocket (undici) takes headers; browsers cannot send them, and the server then reads the query instead. */
const IN_NODE = typeof (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node === 'string';

/**
 * One WebSocket attached to a terminal session. The session outlives the socket: `close()` only
 * detaches (a later `connect` repaints the kept output), `Terminals.kill` ends it.
 */
export class TerminalConnection {
  readonly id: string;
  readonly #socket: WebSocket;
  readonly #encoder = new TextEncoder();
  readonly #data: Listener<Uint8Array>[] = [];
  readonly #exit: Listener<TerminalExit>[] = [];
  readonly #errors: Listener<SandpitError>[] = [];
  /** Output that arrived before anyone listened (the repaint comes at once), handed to the first listener. */
  #pending: Uint8Array[] = [];
  #exited: TerminalExit | undefined;
  readonly #closed: Promise<TerminalExit>;

  constructor(id: string, socket: WebSocket) {
    this.id = id;
    this.#socket = socket;
    socket.addEventListener('message', (ev) => this.#message(ev.data));
    this.#closed = new Promise((resolve, reject) => {
      socket.addEventListener('close', (ev) => {
        if (this.#exited) resolve(this.#exited);
        else reject(new ConnectionError(`terminal ${id}: the connection closed before the process exited (${ev.code}${ev.reason ? ` ${ev.reason}` : ''})`));
      });
    });
    // Whoever never calls wait() must not get an unhandled rejection.
    this.#closed.catch(() => {});
  }

  /** Terminal output, as raw bytes. */
  onData(listener: Listener<Uint8Array>): void {
    this.#data.push(listener);
    const pending = this.#pending;
    this.#pending = [];
    for (const chunk of pending) listener(chunk);
  }

  /** Called once with the exit code when the process ends (at once if it already has). */
  onExit(listener: Listener<TerminalExit>): void {
    this.#exit.push(listener);
    if (this.#exited) listener(this.#exited);
  }

  /** Errors the server reports for a control message (for example a resize after the process exited). */
  onError(listener: Listener<SandpitError>): void {
    this.#errors.push(listener);
  }

  /** Sends input, as if typed (text is sent as UTF-8). */
  write(data: string | Uint8Array): void {
    this.#socket.send(typeof data === 'string' ? this.#encoder.encode(data) : data);
  }

  resize(cols: number, rows: number): void {
    this.#socket.send(JSON.stringify({ type: 'resize', cols, rows }));
  }

  /** Resolves with the exit when the process ends; rejects with ConnectionError when the socket closes first. */
  wait(): Promise<TerminalExit> {
    return this.#closed;
  }

  /** Detaches; the session keeps running. */
  close(): void {
    this.#socket.close(1000);
  }

  #message(data: unknown): void {
    if (typeof data !== 'string') {
      const chunk = new Uint8Array(data as ArrayBuffer);
      if (this.#data.length === 0) this.#pending.push(chunk);
      for (const listener of this.#data) listener(chunk);
      return;
    }
    const msg = JSON.parse(data) as { type?: string; exit_code?: number; signal?: number | null; code?: string; message?: string };
    if (msg.type === 'exit') {
      this.#exited = { exitCode: msg.exit_code ?? -1, signal: msg.signal ?? null };
      for (const listener of this.#exit) listener(this.#exited);
    } else if (msg.type === 'error') {
      const err = new SandpitError(`terminal ${this.id}: ${msg.code}: ${msg.message}`);
      for (const listener of this.#errors) listener(err);
    }
  }
}

/** PTY sessions in one sandbox over the data plane. */
export class Terminals {
  readonly #plane: DataPlane;

  constructor(plane: DataPlane) {
    this.#plane = plane;
  }

  /** Starts a session (a PTY running as user; default `bash -l`, 80x24). Attach to it with `connect`. */
  create(opts: CreateTerminalOptions = {}): Promise<TerminalInfo> {
    const { cols, rows, command, args, env, cwd, ...request } = opts;
    const body: CreateTerminalParams = {};
    if (cols !== undefined) body.cols = cols;
    if (rows !== undefined) body.rows = rows;
    if (command !== undefined) body.command = command;
    if (args) body.args = args;
    if (env) body.env = env;
    if (cwd) body.working_dir = cwd;
    return this.#plane.json({ method: 'POST', path: '/terminals', body, ...request });
  }

  async list(opts: RequestOptions = {}): Promise<TerminalInfo[]> {
    return (await this.#plane.json<{ terminals: TerminalInfo[] }>({ method: 'GET', path: '/terminals', ...opts })).terminals;
  }

  get(id: string, opts: RequestOptions = {}): Promise<TerminalInfo> {
    return this.#plane.json({ method: 'GET', path: `/terminals/${encodeURIComponent(id)}`, ...opts });
  }

  /** Ends a session (SIGKILL to its process group); false when it was already gone. */
  async kill(id: string, opts: RequestOptions = {}): Promise<boolean> {
    try {
      await this.#plane.json({ method: 'DELETE', path: `/terminals/${encodeURIComponent(id)}`, ...opts });
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  /** Attaches a WebSocket to a session; resolves once it is open. The kept output (up to 256 KiB) arrives first. */
  async connect(id: string, opts: RequestOptions = {}): Promise<TerminalConnection> {
    // Node 20 has no global WebSocket (Node 22 and later, Bun, Deno and browsers do).
    if (typeof WebSocket === 'undefined') throw new ConfigurationError('terminals need a global WebSocket: Node.js 22 or later, Bun, Deno or a browser');
    const target = await this.#plane.target(opts);
    const url = new URL(`${target.baseUrl}/terminals/${encodeURIComponent(id)}/connect`);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    if (!IN_NODE) {
      url.searchParams.set('sandbox_id', this.#plane.sandboxId);
      url.searchParams.set('access_token', this.#plane.accessToken);
    }
    // The headers option is undici's extension of the WebSocket constructor.
    const init = IN_NODE ? ({ headers: target.headers } as unknown as string[]) : undefined;
    const socket = new WebSocket(url, init);
    socket.binaryType = 'arraybuffer';
    const connection = new TerminalConnection(id, socket);
    const timeoutMs = opts.timeoutMs ?? this.#plane.client.http.timeoutMs;
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new TimeoutError(`terminal ${id}: no connection within ${timeoutMs} ms`)), timeoutMs);
        const onAbort = () => reject(opts.signal?.reason);
        opts.signal?.addEventListener('abort', onAbort, { once: true });
        const settle = (fn: () => void) => () => {
          clearTimeout(timer);
          opts.signal?.removeEventListener('abort', onAbort);
          fn();
        };
        socket.addEventListener('open', settle(resolve), { once: true });
        socket.addEventListener(
          'close',
          settle(() => reject(new ConnectionError(`terminal ${id}: the connection was refused`))),
          { once: true },
        );
      });
    } catch (err) {
      socket.close();
      throw err instanceof ConnectionError ? await this.#why(id, err) : err;
    }
    return connection;
  }

  /** A refused upgrade carries no status through the WebSocket API; the session's own GET tells what was wrong. */
  async #why(id: string, refused: ConnectionError): Promise<SandpitError> {
    try {
      await this.get(id);
      return refused;
    } catch (err) {
      return err instanceof ApiError ? err : refused;
    }
  }
}
