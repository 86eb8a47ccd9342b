import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Clock } from '../../clock.ts';
import { badRequest, conflict, notFound, unavailable } from '../../errors.ts';
import type { AgentClient, AgentError, AgentProcess, ExitInfo } from '../../runtime/agent-client.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';
import { SANDBOX_HOME, SANDBOX_USER } from '../../templates/sandbox-user.ts';
import type { SandboxService } from '../sandboxes/sandboxes.ts';

/** Output kept per background process for reads and late subscribers; older output is dropped. */
export const PROCESS_OUTPUT_BYTES = 1024 * 1024;
/** Exited sessions kept per sandbox (for their output and status) before the oldest are forgotten. */
const EXITED_KEPT = 100;
/** Agent process names this host owns start with this; the rest is the session's JSON description. */
const NAME_PREFIX = 'sandpit:';

export type SessionKind = 'process' | 'terminal';
export type StreamName = 'stdout' | 'stderr';

/** What the agent keeps as the process name, so a restarted server can rebuild the session. */
interface SessionMeta {
  kind: SessionKind;
  id: string;
  argv: string[];
  cwd: string;
  startedAt: number;
  cols?: number;
  rows?: number;
}

/** Bounded output history: whole chunks, oldest dropped first. */
class OutputLog {
  readonly cap: number;
  chunks: { stream: StreamName; data: Buffer }[] = [];
  bytes = 0;
  dropped = 0;

  constructor(cap: number) {
    this.cap = cap;
  }

  push(stream: StreamName, data: Buffer): void {
    this.chunks.push({ stream, data });
    this.bytes += data.length;
    while (this.bytes > this.cap && this.chunks.length) {
      const first = this.chunks[0]!;
      const excess = this.bytes - this.cap;
      if (first.data.length <= excess) {
        this.chunks.shift();
        this.bytes -= first.data.length;
        this.dropped += first.data.length;
      } else {
        this.chunks[0] = { stream: first.stream, data: first.data.subarray(excess) };
        this.bytes -= excess;
        this.dropped += excess;
      }
    }
  }
}

export interface SessionExit {
  exitCode: number;
  signal: number | null;
}

/**
 * A background process (or terminal) of a sandbox. The process runs with the agent's
 * background flag, so it outlives WebSocket/SSE clients and the agent connection itself;
 * output is kept here on the host (host memory is not charged to the sandbox, and the agent
 * keeps only a small tail for when no host is attached), and replayed to late subscribers.
 */
export class Session extends EventEmitter<{ output: [stream: StreamName, data: Buffer]; exit: [exit: SessionExit] }> {
  readonly meta: SessionMeta;
  readonly sandboxId: string;
  readonly log: OutputLog;
  pid: number;
  proc: AgentProcess | undefined;
  exit: SessionExit | undefined;
  exitedAt = 0;

  constructor(sandboxId: string, meta: SessionMeta, pid: number, cap: number) {
    super();
    this.setMaxListeners(0);
    this.sandboxId = sandboxId;
    this.meta = meta;
    this.pid = pid;
    this.log = new OutputLog(cap);
  }

  get id(): string {
    return this.meta.id;
  }

  /** Follows a live agent process; on a lost connection the session waits to be attached again. */
  bind(proc: AgentProcess, onExit: () => void): void {
    this.proc = proc;
    proc.on('stdout', (b: Buffer) => this.#out('stdout', b));
    proc.on('stderr', (b: Buffer) => this.#out('stderr', b));
    proc.once('exit', (info: ExitInfo) => {
      this.proc = undefined;
      this.exit = { exitCode: info.exitCode, signal: info.signal };
      onExit();
      this.emit('exit', this.exit);
    });
    proc.once('error', () => {
      if (this.proc === proc) this.proc = undefined;
    });
  }

  #out(stream: StreamName, data: Buffer): void {
    this.log.push(stream, data);
    this.emit('output', stream, data);
  }

  /** Replays kept output then follows live output, with no gap: both happen in one tick. */
  subscribe(onOutput: (stream: StreamName, data: Buffer) => void, onExit: (exit: SessionExit) => void): () => void {
    for (const c of this.log.chunks) onOutput(c.stream, c.data);
    if (this.exit) {
      onExit(this.exit);
      return () => {};
    }
    this.on('output', onOutput);
    this.once('exit', onExit);
    return () => {
      this.off('output', onOutput);
      this.off('exit', onExit);
    };
  }

  live(): AgentProcess {
    if (this.exit) throw conflict(`${this.meta.kind} '${this.id}' has exited`);
    if (!this.proc) throw unavailable(`${this.meta.kind} '${this.id}' is being reattached; retry`);
    return this.proc;
  }
}

export interface StartSpec {
  kind: SessionKind;
  argv: string[];
  env?: Record<string, string>;
  cwd?: string;
  pty?: { cols: number; rows: number };
  outputBytes: number;
  /** Default: the sandbox user. */
  user?: string;
}

/**
 * Background sessions of every sandbox. The agent is the source of truth for what runs: the
 * first use of each agent connection lists its named processes and re-attaches to the ones this
 * host started, so sessions survive a server restart and a dropped agent connection.
 */
export class SessionRegistry {
  readonly sandboxes: SandboxService;
  readonly clock: Clock;
  readonly #bySandbox = new Map<string, Map<string, Session>>();
  readonly #synced = new WeakMap<AgentClient, Promise<void>>();

  constructor(sandboxes: SandboxService, clock: Clock) {
    this.sandboxes = sandboxes;
    this.clock = clock;
  }

  /** The sandbox's sessions after making sure they are attached to the current agent connection. */
  async sessions(rec: SandboxRecord): Promise<{ client: AgentClient; map: Map<string, Session> }> {
    const { live, client } = await this.sandboxes.withAgent(rec);
    let map = this.#bySandbox.get(live.id);
    if (!map) this.#bySandbox.set(live.id, (map = new Map()));
    let sync = this.#synced.get(client);
    if (!sync) {
      sync = this.#sync(live.id, client, map);
      this.#synced.set(client, sync);
    }
    await sync;
    return { client, map };
  }

  async #sync(sandboxId: string, client: AgentClient, map: Map<string, Session>): Promise<void> {
    const running = await client.listProcesses().catch(() => []);
    const seen = new Set<string>();
    for (const info of running) {
      if (!info.name.startsWith(NAME_PREFIX) || info.attached) continue;
      let meta: SessionMeta;
      try {
        meta = JSON.parse(info.name.slice(NAME_PREFIX.length)) as SessionMeta;
      } catch {
        continue;
      }
      seen.add(meta.id);
      let s = map.get(meta.id);
      if (!s) {
        s = new Session(sandboxId, meta, info.pid, meta.kind === 'terminal' ? TERMINAL_REPLAY_BYTES : PROCESS_OUTPUT_BYTES);
        map.set(meta.id, s);
      }
      this.#bind(s, client.attach(info.pid), map);
    }
    // Sessions the agent no longer knows (the sandbox restarted): nothing is left to follow.
    for (const [id, s] of map) if (!s.exit && !s.proc && !seen.has(id)) map.delete(id);
  }

  #bind(s: Session, proc: AgentProcess, map: Map<string, Session>): void {
    s.bind(proc, () => {
      s.exitedAt = this.clock.now();
      const exited = [...map.values()].filter((x) => x.exit).sort((a, b) => a.exitedAt - b.exitedAt);
      for (const old of exited.slice(0, Math.max(0, exited.length - EXITED_KEPT))) map.delete(old.id);
    });
  }

  async start(rec: SandboxRecord, spec: StartSpec): Promise<Session> {
    const { client, map } = await this.sessions(rec);
    const meta: SessionMeta = {
      kind: spec.kind,
      id: randomUUID(),
      argv: spec.argv,
      cwd: spec.cwd ?? SANDBOX_HOME,
      startedAt: this.clock.now(),
      ...(spec.pty ? { cols: spec.pty.cols, rows: spec.pty.rows } : {}),
    };
    const proc = client.spawn({
      argv: spec.argv,
      env: spec.env,
      cwd: meta.cwd,
      user: spec.user ?? SANDBOX_USER,
      pty: spec.pty,
      background: true,
      name: NAME_PREFIX + JSON.stringify(meta),
    });
    // Bound before any await: output can arrive in the same read as SPAWNED.
    const s = new Session(rec.id, meta, 0, spec.outputBytes);
    const spawned = new Promise<number>((resolve, reject) => {
      proc.once('spawn', resolve);
      proc.once('error', (err: AgentError) => reject(err.code === 'ECONNRESET' ? unavailable(err.message) : badRequest(err.message)));
    });
    this.#bind(s, proc, map);
    s.pid = await spawned;
    map.set(meta.id, s);
    return s;
  }

  async get(rec: SandboxRecord, kind: SessionKind, id: string): Promise<Session> {
    const { map } = await this.sessions(rec);
    const s = map.get(id) ?? (/^\d+$/.test(id) ? [...map.values()].find((x) => String(x.pid) === id) : undefined);
    if (!s || s.meta.kind !== kind) throw notFound(`${kind} '${id}' not found`);
    return s;
  }

  async list(rec: SandboxRecord, kind: SessionKind): Promise<Session[]> {
    const { map } = await this.sessions(rec);
    return [...map.values()].filter((s) => s.meta.kind === kind).sort((a, b) => a.meta.startedAt - b.meta.startedAt);
  }

  /** Kills a running session's process group and forgets the session. */
  async remove(rec: SandboxRecord, kind: SessionKind, id: string): Promise<void> {
    const s = await this.get(rec, kind, id);
    if (!s.exit) {
      const ended = new Promise<void>((resolve) => {
        s.once('exit', () => resolve());
        setTimeout(resolve, 2000).unref();
      });
      s.proc?.kill('SIGKILL');
      await ended;
    }
    this.#bySandbox.get(s.sandboxId)?.delete(s.id);
  }
}

/** Terminal output replayed on reconnect. */
export const TERMINAL_REPLAY_BYTES = 256 * 1024;
