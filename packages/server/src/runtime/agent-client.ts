/**
 * Client of the in-sandbox agent (packages/agent): one unix-socket connection that
 * multiplexes any number of processes.
 */
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { socketName } from './host/socket-path.ts';
import { constants as osConstants } from 'node:os';
import {
  AttachTag,
  decodeTlv,
  decodeTlvList,
  encodeFrame,
  ErrorTag,
  ExitTag,
  FileFlag,
  FileOp,
  FileTag,
  FrameDecoder,
  frameHeader,
  HelloTag,
  PROTOCOL_VERSION,
  Msg,
  ProcFlag,
  ProcTag,
  MountFlag,
  MountTag,
  ReadTag,
  RecordTag,
  SetEnvFlag,
  SetEnvTag,
  SpawnedTag,
  SpawnFlag,
  SpawnTag,
  TlvWriter,
  u16Pair,
} from './agent-protocol.ts';
import { libc } from './host/libc.ts';

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
  /** Host label; makes the process listable (listProcesses) and attachable after this connection is gone. */
  name?: string;
}

export type FileOpName = keyof typeof FileOp;

export interface FileRequest {
  op: FileOpName;
  /** Absolute path inside the sandbox. */
  path: string;
  /** rename: the new path. */
  to?: string;
  /** mkdir, write: create missing parent directories. */
  parents?: boolean;
  /** remove: whole trees; watch: subdirectories too. */
  recursive?: boolean;
  /** rename: fail with EEXIST instead of replacing. */
  noOverwrite?: boolean;
  /**
   * read, write on a connection of their own: the agent's helper moves the frames on the connection
   * itself (far fewer calls inside the sandbox). Looks the same to the client; nothing else may be
   * sent on the connection until the operation ends.
   */
  direct?: boolean;
  /** Default "user". */
  user?: string;
}

/** A named process the agent runs, as LIST reports it. */
export interface AgentProcInfo {
  pid: number;
  name: string;
  pty: boolean;
  /** Owned by some live connection (maybe another host's). */
  attached: boolean;
  /** Ended while no host was attached; ATTACH collects the status. */
  exit?: { exitCode: number; signal: number | null };
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
  /** The agent dropped this many stdin bytes: the process is not reading and its backlog is full. */
  stdinDropped: [bytes: number];
}

export interface AgentProcess extends EventEmitter<AgentProcessEvents> {
  /** Set once the agent reports a successful exec ('spawn' event). */
  readonly pid: number | undefined;
  /** File reads: the size the file had when opened (from SPAWNED). */
  readonly size: number | undefined;
  /**
   * Sends stdin; several buffers go out as one frame per MiB, with no copy (fewer, larger
   * writes inside the sandbox). false: the connection's send buffer is full (see AgentClient.drained).
   */
  write(data: Buffer | string | readonly Buffer[]): boolean;
  /** Resolves once the agent took the input; rejects with EAGAIN when it was dropped (backlog full). */
  writeChecked(data: Buffer | string): Promise<void>;
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

/** The largest file the agent reads or writes itself (FILE_NOW; READ_MAX in proto.h). */
export const FILE_NOW_MAX = 1024 * 1024;

function fileRequestTlv(req: FileRequest): TlvWriter {
  const w = new TlvWriter().u32(FileTag.op, FileOp[req.op]).string(FileTag.path, req.path);
  if (req.to !== undefined) w.string(FileTag.path2, req.to);
  const flags = (req.parents ? FileFlag.parents : 0) | (req.recursive ? FileFlag.recursive : 0) | (req.noOverwrite ? FileFlag.noOverwrite : 0) | (req.direct ? FileFlag.direct : 0);
  if (flags) w.u32(FileTag.flags, flags);
  if (req.user !== undefined) w.string(FileTag.user, req.user);
  return w;
}

/** The agent writes each STDIN frame to the process's pipe in one go; file transfers get 1 MiB pipes. */
const STDIN_FRAME_BYTES = 1024 * 1024;
/** Payloads from this size on are written without copying them into a frame buffer. */
const BULK_PAYLOAD = 16 * 1024;
const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
const errnoNames = new Map(Object.entries(osConstants.errno).map(([name, num]) => [num, name]));
const SOL_SOCKET = 1;
const SO_SNDBUF = 7;
const setsockopt = libc.func('int setsockopt(int, int, int, const int *, uint32_t)');

type Send = (type: number, payload?: Buffer | readonly Buffer[]) => boolean;

class AgentProcessImpl extends EventEmitter<AgentProcessEvents> implements AgentProcess {
  pid: number | undefined;
  size: number | undefined;
  /** Bytes the agent reported dropped so far (writeChecked compares before and after a ping). */
  dropped = 0;
  #send: Send;
  #ping: () => Promise<unknown>;
  #done = false;

  constructor(send: Send, ping: () => Promise<unknown>) {
    super();
    this.#send = send;
    this.#ping = ping;
  }

  write(data: Buffer | string | readonly Buffer[]): boolean {
    if (this.#done) return true;
    const bufs = typeof data === 'string' ? [Buffer.from(data, 'utf8')] : Buffer.isBuffer(data) ? [data] : data;
    let ok = true;
    let frame: Buffer[] = [];
    let size = 0;
    for (const buf of bufs) {
      for (let off = 0; off < buf.length; ) {
        const piece = buf.subarray(off, off + STDIN_FRAME_BYTES - size);
        frame.push(piece);
        size += piece.length;
        off += piece.length;
        if (size < STDIN_FRAME_BYTES) continue;
        ok = this.#send(Msg.stdin, frame);
        frame = [];
        size = 0;
      }
    }
    if (size) ok = this.#send(Msg.stdin, frame);
    return ok;
  }

  /** The agent handles frames in order, so a PONG after STDIN means any drop notice for it already arrived. */
  async writeChecked(data: Buffer | string): Promise<void> {
    if (this.#done) throw new AgentError('the process has ended', 'ESRCH');
    const before = this.dropped;
    this.write(data);
    await this.#ping();
    if (this.dropped !== before) {
      throw new AgentError('the process is not reading its stdin and its 4 MiB backlog is full; input was dropped', 'EAGAIN');
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
  resolve: (payload: Buffer) => void;
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
  /** The agent answered FILE_NOW with ENOSYS: it predates it. */
  #noFileNow = false;

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
        const socket = await dialUnix(socketPath);
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
            if (version !== PROTOCOL_VERSION) {
              throw new AgentError(`the sandbox's agent speaks protocol ${version}, this server ${PROTOCOL_VERSION}; recreate the sandbox`, 'EPROTO');
            }
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
      const timer = setTimeout(() => fail(Object.assign(new Error('timed out waiting for the agent'), { code: 'ETIMEDOUT' })), Math.max(0, deadline - Date.now()));
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

  #newProc(): { id: number; proc: AgentProcessImpl } {
    const id = this.#allocId();
    const proc = new AgentProcessImpl(
      (type, payload) => this.#send(type, id, payload),
      () => this.ping(),
    );
    if (this.#closed) process.nextTick(() => proc.finish({ error: connectionLost() }));
    else this.#procs.set(id, proc);
    return { id, proc };
  }

  spawn(opts: SpawnOptions): AgentProcess {
    const { id, proc } = this.#newProc();
    if (this.#closed) return proc;
    const w = new TlvWriter();
    for (const arg of opts.argv) w.string(SpawnTag.argv, arg);
    for (const [k, v] of Object.entries(opts.env ?? {})) w.string(SpawnTag.env, `${k}=${v}`);
    if (opts.cwd !== undefined) w.string(SpawnTag.cwd, opts.cwd);
    if (opts.user !== undefined) w.string(SpawnTag.user, opts.user);
    if (opts.timeoutMs) w.u32(SpawnTag.timeoutMs, opts.timeoutMs);
    if (opts.pty) w.u16Pair(SpawnTag.pty, opts.pty.cols, opts.pty.rows);
    const flags = (opts.background ? SpawnFlag.background : 0) | (opts.stdin === false ? SpawnFlag.stdinClosed : 0);
    if (flags) w.u32(SpawnTag.flags, flags);
    if (opts.name !== undefined) w.string(SpawnTag.name, opts.name);
    this.#send(Msg.spawn, id, w.finish());
    return proc;
  }

  /**
   * Starts a file operation in a helper the agent forks as the user. It behaves like a process:
   * 'spawn' once the operation started (size set for reads), its result or file data on stdout,
   * 'exit'; 'error' when it failed before starting. A later failure exits with the errno as code
   * and a message on stderr (fileResult turns that into an AgentError).
   */
  file(req: FileRequest): AgentProcess {
    const { id, proc } = this.#newProc();
    if (!this.#closed) this.#send(Msg.file, id, fileRequestTlv(req).finish());
    return proc;
  }

  /**
   * A small file operation (stat, read, write, mkdir, rename, non-recursive remove) run by the agent
   * itself as the user: one round trip, no helper process. Resolves with the resulting file's entry
   * record (none for remove) and, for read, its bytes. Rejects with EFBIG for a read or write above
   * FILE_NOW_MAX, and with ENOSYS from an agent older than FILE_NOW (remembered: later calls fail at once).
   */
  async fileNow(req: FileRequest & { data?: Buffer }): Promise<{ entry?: Buffer; data?: Buffer }> {
    if (this.#noFileNow) throw new AgentError('the agent runs no file operations itself', 'ENOSYS');
    const w = fileRequestTlv(req);
    if (req.data) w.bytes(FileTag.data, req.data);
    try {
      const recs = decodeTlvList(await this.#request(Msg.fileNow, w.finish()));
      return { entry: recs.find((r) => r.tag === RecordTag.entry)?.value, data: recs.find((r) => r.tag === RecordTag.data)?.value };
    } catch (err) {
      if ((err as AgentError).code === 'ENOSYS' && !this.#closed) this.#noFileNow = true;
      throw err;
    }
  }

  /** Runs a file operation with a small result (stat, list, mkdir, remove, rename) and returns its stdout. */
  fileResult(req: FileRequest): Promise<Buffer> {
    const proc = this.file(req);
    return new Promise((resolve, reject) => {
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      proc.on('stdout', (b) => out.push(b));
      proc.on('stderr', (b) => err.push(b));
      proc.once('error', reject);
      proc.once('exit', (info) => {
        const failure = fileFailure(info, Buffer.concat(err));
        if (failure) reject(failure);
        else resolve(Buffer.concat(out));
      });
    });
  }

  /** Named processes the agent runs (including ones started by an earlier host connection). */
  async listProcesses(): Promise<AgentProcInfo[]> {
    const payload = await this.#request(Msg.list);
    return decodeTlvList(payload).map(({ value }) => {
      const t = decodeTlv(value);
      const flags = t.get(ProcTag.flags)?.readUInt32LE(0) ?? 0;
      const info: AgentProcInfo = {
        pid: t.get(ProcTag.pid)?.readUInt32LE(0) ?? 0,
        name: t.get(ProcTag.name)?.toString('utf8') ?? '',
        pty: (flags & ProcFlag.pty) !== 0,
        attached: (flags & ProcFlag.attached) !== 0,
      };
      if (flags & ProcFlag.exited) {
        info.exit = { exitCode: t.get(ProcTag.exitCode)?.readInt32LE(0) ?? -1, signal: t.get(ProcTag.exitSignal)?.readUInt32LE(0) || null };
      }
      return info;
    });
  }

  /** Takes over a detached named process: 'spawn', the output the agent kept meanwhile, then live events. */
  attach(pid: number): AgentProcess {
    const { id, proc } = this.#newProc();
    if (!this.#closed) this.#send(Msg.attach, id, new TlvWriter().u32(AttachTag.pid, pid).finish());
    return proc;
  }

  /**
   * For a connection of its own that carries an upload: a kernel send buffer of `bytes` (larger
   * than the default), so frames queue ahead and each receive in the sandbox (a trap under gVisor) finds a
   * full one's worth waiting.
   */
  setSendBuffer(bytes: number): void {
    const fd = (this.#socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
    if (typeof fd === 'number' && fd >= 0) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, [bytes], 4);
  }

  /** Stops reading from the agent; on a connection of its own this pauses the agent's sender (backpressure). */
  pause(): void {
    this.#socket.pause();
  }

  resume(): void {
    this.#socket.resume();
  }

  /** Resolves when the send buffer has room again (or the connection is gone). */
  drained(): Promise<void> {
    if (this.#closed || !this.#socket.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.#socket.off('drain', done);
        this.off('close', done);
        resolve();
      };
      this.#socket.on('drain', done);
      this.on('close', done);
    });
  }

  /** Changes the default environment of later spawns: merged over it, or replacing it. */
  async setEnv(env: Record<string, string>, opts: { replace?: boolean } = {}): Promise<void> {
    const w = new TlvWriter();
    for (const [k, v] of Object.entries(env)) w.string(SetEnvTag.set, `${k}=${v}`);
    if (opts.replace) w.u32(SetEnvTag.flags, SetEnvFlag.replace);
    await this.#request(Msg.setEnv, w.finish());
  }

  /** --connect agents only: asks the agent to dial the host once more (see RuntimeDriver.connectAgent). */
  async dial(): Promise<void> {
    await this.#request(Msg.dial);
  }

  /**
   * A small file (at most 1 MiB) read by the agent itself, as root, to EOF: for
   * /proc files, whose size says nothing, and with no child process (a few ms
   * cheaper than a spawn under gVisor's ptrace platform).
   */
  readSmall(path: string): Promise<Buffer> {
    return this.#request(Msg.read, new TlvWriter().string(ReadTag.path, path).finish());
  }

  /**
   * Every process's open descriptors, read by the agent itself as root: a line each,
   * `/proc/<pid>/fd <target>`. An agent older than this request answers ENOSYS.
   */
  descriptors(): Promise<Buffer> {
    return this.#request(Msg.descriptors);
  }

  /**
   * Binds `source` at `target` inside the sandbox (read-only when asked), by the agent itself: only a
   * gVisor sandbox's agent holds the capability it needs (a volume given to it running).
   */
  async mount(source: string, target: string, readOnly: boolean): Promise<void> {
    const w = new TlvWriter().string(MountTag.source, source).string(MountTag.target, target);
    if (readOnly) w.u32(MountTag.flags, MountFlag.readOnly);
    await this.#request(Msg.mount, w.finish());
  }

  async ping(): Promise<void> {
    await this.#request(Msg.ping);
  }

  close(): void {
    this.#socket.destroy();
  }

  #request(type: number, payload?: Buffer): Promise<Buffer> {
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

  #send(type: number, id: number, payload?: Buffer | readonly Buffer[]): boolean {
    if (this.#closed) return true;
    const parts = payload === undefined ? [] : Buffer.isBuffer(payload) ? [payload] : payload;
    let len = 0;
    for (const b of parts) len += b.length;
    if (len < BULK_PAYLOAD) return this.#socket.write(encodeFrame(type, id, parts.length === 1 ? parts[0] : Buffer.concat(parts)));
    // Bulk data (uploads) goes out as the header plus the caller's buffers in one writev: no copy.
    this.#socket.cork();
    let ok = this.#socket.write(frameHeader(type, id, len));
    for (const b of parts) ok = this.#socket.write(b);
    this.#socket.uncork();
    return ok;
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
          const t = decodeTlv(payload);
          proc.pid = t.get(SpawnedTag.pid)?.readUInt32LE(0);
          const size = t.get(SpawnedTag.size);
          if (size) proc.size = Number(size.readBigUInt64LE(0));
          proc.emit('spawn', proc.pid ?? 0);
        }
        return;
      case Msg.stdinDropped:
        if (proc) {
          const bytes = payload.readUInt32LE(0);
          proc.dropped += bytes;
          proc.emit('stdinDropped', bytes);
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
      case Msg.procs:
        this.#settle(id, undefined, payload);
        return;
      default:
        return; // newer agents may send messages this client does not know
    }
  }

  #settle(id: number, err?: Error, payload: Buffer = Buffer.alloc(0)): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    if (err) pending.reject(err);
    else pending.resolve(payload);
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

/** A file helper that started but then failed exits with the errno as its code and a message on stderr. */
export function fileFailure(info: ExitInfo, stderr: Buffer): AgentError | undefined {
  if (info.exitCode === 0) return undefined;
  const message = stderr.toString('utf8') || `file operation ended with status ${info.exitCode}`;
  if (info.signal) return new AgentError(`file operation killed by signal ${info.signal}`, 'EINTR');
  return new AgentError(message, errnoNames.get(info.exitCode), info.exitCode);
}

function connectionLost(): AgentError {
  return new AgentError('agent connection lost', 'ECONNRESET');
}

/** Connects to a unix socket; with `timeoutMs`, gives up when nothing answers by then. */
export function dialUnix(path: string, timeoutMs?: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const name = socketName(path);
    const socket = net.createConnection(name.name);
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => socket.destroy(new Error(`agent socket ${path} did not answer in ${timeoutMs} ms`)), timeoutMs);
    const failed = (err: Error) => {
      clearTimeout(timer);
      name.release();
      reject(err);
    };
    socket.once('connect', () => {
      clearTimeout(timer);
      name.release();
      socket.off('error', failed);
      resolve(socket);
    });
    socket.once('error', failed);
  });
}
