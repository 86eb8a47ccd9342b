/**
 * Client of the in-sandbox agent (packages/agent): one unix-socket connection that
 * multiplexes any number of processes.
 */
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { constants as osConstants } from 'node:os';
import {
  decodeTlv,
  encodeFrame,
  ErrorTag,
  ExitTag,
  FrameDecoder,
  HelloTag,
  Msg,
  SetEnvFlag,
  SetEnvTag,
  SpawnedTag,
  SpawnFlag,
  SpawnTag,
  TlvWriter,
  u16Pair,
} from './agent-protocol.ts';

export interface SpawnOptions {
  argv: string[];
  env?: Record<string, string>;
  /** Default: the user's home directory. */
  cwd?: string;
  /** Default: "user". */
  user?: string;
  /** 0 or absent: no limit. At the limit the whole process group is killed. */
  timeoutMs?: number;
  /** Run on a terminal; stdout then carries the terminal output and stderr stays silent. */
  pty?: { cols: number; rows: number };
  /** Keep running when this connection closes (otherwise the process group is killed). */
  background?: boolean;
  /** false: the process sees EOF on stdin at once. Default true (stdin stays open until closeStdin). */
  stdin?: boolean;
}

export interface ExitInfo {
  exitCode: number;
  signal: number | null;
  timedOut: boolean;
}

export interface AgentProcessEvents {
  spawn: [pid: number];
  stdout: [data: Buffer];
  stderr: [data: Buffer];
  exit: [info: ExitInfo];
  error: [err: AgentError];
}

export interface AgentProcess extends EventEmitter<AgentProcessEvents> {
  /** Set once the agent reports a successful exec ('spawn' event). */
  readonly pid: number | undefined;
  write(data: Buffer | string): void;
  closeStdin(): void;
  kill(signal?: NodeJS.Signals | number): void;
  resize(cols: number, rows: number): void;
}

/** code is the errno name (ENOENT, EACCES, ...) when the agent reported one. */
export class AgentError extends Error {
  readonly code: string | undefined;
  readonly errno: number | undefined;

  constructor(message: string, code?: string, errno?: number) {
    super(message);
    this.name = 'AgentError';
    this.code = code;
    this.errno = errno;
  }
}

const STDIN_FRAME_BYTES = 1024 * 1024;
const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
const errnoNames = new Map(Object.entries(osConstants.errno).map(([name, num]) => [num, name]));

type Send = (type: number, payload?: Buffer) => void;

class AgentProcessImpl extends EventEmitter<AgentProcessEvents> implements AgentProcess {
  pid: number | undefined;
  #send: Send;
  #done = false;

  constructor(send: Send) {
    super();
    this.#send = send;
  }

  write(data: Buffer | string): void {
    if (this.#done) return;
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    for (let off = 0; off < buf.length; off += STDIN_FRAME_BYTES) {
      this.#send(Msg.stdin, buf.subarray(off, off + STDIN_FRAME_BYTES));
    }
  }

  closeStdin(): void {
    if (!this.#done) this.#send(Msg.stdinClose);
  }

  kill(signal: NodeJS.Signals | number = 'SIGTERM'): void {
    const num = typeof signal === 'number' ? signal : osConstants.signals[signal];
    if (num === undefined) throw new Error(`unknown signal ${String(signal)}`);
    if (this.#done) return;
    const payload = Buffer.allocUnsafe(4);
    payload.writeUInt32LE(num, 0);
    this.#send(Msg.signal, payload);
  }

  resize(cols: number, rows: number): void {
    if (!this.#done) this.#send(Msg.resize, u16Pair(cols, rows));
  }

  /** Called by the client once, with the final event. */
  finish(event: { exit: ExitInfo } | { error: AgentError }): void {
    this.#done = true;
    if ('exit' in event) this.emit('exit', event.exit);
    else this.emit('error', event.error);
  }
}

interface Pending {
  resolve: () => void;
  reject: (err: Error) => void;
}

export class AgentClient extends EventEmitter<{ close: [] }> {
  /** Protocol version announced by the agent. */
  readonly version: number;
  #socket: net.Socket;
  #decoder: FrameDecoder;
  #procs = new Map<number, AgentProcessImpl>();
  #pending = new Map<number, Pending>();
  #nextId = 1;
  #closed = false;

  private constructor(socket: net.Socket, version: number, decoder: FrameDecoder) {
    super();
    this.#socket = socket;
    this.version = version;
    this.#decoder = decoder;
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', () => {}); // 'close' follows and reports the loss
    socket.on('close', () => this.#onClose());
  }

  /** Dials the agent's socket, retrying while it does not exist or refuses (the sandbox may be starting). */
  static async connect(socketPath: string, opts: { timeoutMs?: number } = {}): Promise<AgentClient> {
    const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
    for (;;) {
      try {
        const socket = await dial(socketPath);
        return await AgentClient.#handshake(socket, deadline);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const retry = code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'ECONNRESET';
        if (!retry || Date.now() >= deadline) throw err;
        await new Promise((r) => setTimeout(r, 1));
      }
    }
  }

  /** Wraps an already connected socket, e.g. one the agent dialed with --connect. */
  static attach(socket: net.Socket, opts: { timeoutMs?: number } = {}): Promise<AgentClient> {
    return AgentClient.#handshake(socket, Date.now() + (opts.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS));
  }

  /** Waits for HELLO so a resolved client is known to be served by a live agent. */
  static #handshake(socket: net.Socket, deadline: number): Promise<AgentClient> {
    return new Promise((resolve, reject) => {
      const decoder = new FrameDecoder();
      const fail = (err: Error): void => {
        cleanup();
        socket.destroy();
        reject(err);
      };
      let client: AgentClient | undefined;
      const onData = (chunk: Buffer): void => {
        try {
          decoder.push(chunk, (type, id, payload) => {
            // Frames behind HELLO in the same chunk belong to the client.
            if (client) return client.#onFrame(type, id, payload);
            if (type !== Msg.hello) throw new Error(`agent sent message ${type} before hello`);
            const version = decodeTlv(payload).get(HelloTag.version)?.readUInt32LE(0) ?? 0;
            client = new AgentClient(socket, version, decoder);
          });
        } catch (err) {
          if (!client) fail(err as Error);
          else socket.destroy();
        }
        if (client) {
          cleanup();
          resolve(client);
        }
      };
      const onClose = (): void => fail(Object.assign(new Error('agent closed the connection'), { code: 'ECONNRESET' }));
      const onError = (err: Error): void => fail(err);
      const timer = setTimeout(
        () => fail(Object.assign(new Error('timed out waiting for the agent'), { code: 'ETIMEDOUT' })),
        Math.max(0, deadline - Date.now()),
      );
      const cleanup = (): void => {
        clearTimeout(timer);
        socket.off('data', onData);
        socket.off('close', onClose);
        socket.off('error', onError);
      };
      socket.on('data', onData);
      socket.on('close', onClose);
      socket.on('error', onError);
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  spawn(opts: SpawnOptions): AgentProcess {
    const id = this.#allocId();
    const proc = new AgentProcessImpl((type, payload) => this.#send(type, id, payload));
    if (this.#closed) {
      process.nextTick(() => proc.finish({ error: connectionLost() }));
      return proc;
    }
    const w = new TlvWriter();
    for (const arg of opts.argv) w.string(SpawnTag.argv, arg);
    for (const [k, v] of Object.entries(opts.env ?? {})) w.string(SpawnTag.env, `${k}=${v}`);
    if (opts.cwd !== undefined) w.string(SpawnTag.cwd, opts.cwd);
    if (opts.user !== undefined) w.string(SpawnTag.user, opts.user);
    if (opts.timeoutMs) w.u32(SpawnTag.timeoutMs, opts.timeoutMs);
    if (opts.pty) w.u16Pair(SpawnTag.pty, opts.pty.cols, opts.pty.rows);
    const flags = (opts.background ? SpawnFlag.background : 0) | (opts.stdin === false ? SpawnFlag.stdinClosed : 0);
    if (flags) w.u32(SpawnTag.flags, flags);
    this.#procs.set(id, proc);
    this.#send(Msg.spawn, id, w.finish());
    return proc;
  }

  /** Changes the default environment of later spawns: merged over it, or replacing it. */
  setEnv(env: Record<string, string>, opts: { replace?: boolean } = {}): Promise<void> {
    const w = new TlvWriter();
    for (const [k, v] of Object.entries(env)) w.string(SetEnvTag.set, `${k}=${v}`);
    if (opts.replace) w.u32(SetEnvTag.flags, SetEnvFlag.replace);
    return this.#request(Msg.setEnv, w.finish());
  }

  ping(): Promise<void> {
    return this.#request(Msg.ping);
  }

  close(): void {
    this.#socket.destroy();
  }

  #request(type: number, payload?: Buffer): Promise<void> {
    if (this.#closed) return Promise.reject(connectionLost());
    const id = this.#allocId();
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#send(type, id, payload);
    });
  }

  #allocId(): number {
    do this.#nextId = this.#nextId >= 0xffffffff ? 1 : this.#nextId + 1;
    while (this.#procs.has(this.#nextId) || this.#pending.has(this.#nextId));
    return this.#nextId;
  }

  #send(type: number, id: number, payload?: Buffer): void {
    if (!this.#closed) this.#socket.write(encodeFrame(type, id, payload));
  }

  #onData(chunk: Buffer): void {
    try {
      this.#decoder.push(chunk, (type, id, payload) => this.#onFrame(type, id, payload));
    } catch {
      this.#socket.destroy(); // a malformed stream cannot be resynchronised
    }
  }

  #onFrame(type: number, id: number, payload: Buffer): void {
    const proc = this.#procs.get(id);
    switch (type) {
      case Msg.stdout:
        proc?.emit('stdout', payload);
        return;
      case Msg.stderr:
        proc?.emit('stderr', payload);
        return;
      case Msg.spawned:
        if (proc) {
          proc.pid = decodeTlv(payload).get(SpawnedTag.pid)?.readUInt32LE(0);
          proc.emit('spawn', proc.pid ?? 0);
        }
        return;
      case Msg.exit: {
        if (!proc) return;
        const t = decodeTlv(payload);
        const signal = t.get(ExitTag.signal)?.readUInt32LE(0) ?? 0;
        this.#procs.delete(id);
        proc.finish({
          exit: {
            exitCode: t.get(ExitTag.code)?.readInt32LE(0) ?? -1,
            signal: signal || null,
            timedOut: (t.get(ExitTag.timedOut)?.readUInt8(0) ?? 0) !== 0,
          },
        });
        return;
      }
      case Msg.error: {
        const t = decodeTlv(payload);
        const errno = t.get(ErrorTag.errno)?.readUInt32LE(0);
        const message = t.get(ErrorTag.message)?.toString('utf8') ?? 'agent error';
        const err = new AgentError(message, errno === undefined ? undefined : errnoNames.get(errno), errno);
        if (proc) {
          this.#procs.delete(id);
          proc.finish({ error: err });
        } else {
          this.#settle(id, err);
        }
        return;
      }
      case Msg.ok:
      case Msg.pong:
        this.#settle(id);
        return;
      default:
        return; // newer agents may send messages this client does not know
    }
  }

  #settle(id: number, err?: Error): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    if (err) pending.reject(err);
    else pending.resolve();
  }

  #onClose(): void {
    this.#closed = true;
    const procs = [...this.#procs.values()];
    const pending = [...this.#pending.values()];
    this.#procs.clear();
    this.#pending.clear();
    for (const p of pending) p.reject(connectionLost());
    for (const p of procs) p.finish({ error: connectionLost() });
    this.emit('close');
  }
}

function connectionLost(): AgentError {
  return new AgentError('agent connection lost', 'ECONNRESET');
}

function dial(socketPath: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}
