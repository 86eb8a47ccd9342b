import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.ts';
import { PROCESS_OUTPUT_BYTES, type Session, type SessionExit, type SessionRegistry, TERMINAL_REPLAY_BYTES } from '../../services/data-plane/sessions.ts';
import type { SandboxService } from '../../services/sandboxes/sandboxes.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';
import { type Message, type StreamContext, StreamDropped } from '../connect.ts';
import { ConnectError } from '../errors.ts';
import { envdSandbox, envdUser, homeOf } from './target.ts';

interface ProcessConfig {
  cmd: string;
  args: string[];
  envs: Record<string, string>;
  cwd?: string;
}

/** What envd reports of a process that Sandpit's sessions do not keep. */
interface Extra {
  config: ProcessConfig;
  tag?: string;
}

const SIGNALS: Record<string, number> = { SIGNAL_SIGKILL: 9, SIGNAL_SIGTERM: 15 };
/** Go's names for the signals envd's end status mentions ("signal: killed"). */
const SIGNAL_STATUS: Record<number, string> = { 1: 'hangup', 2: 'interrupt', 9: 'killed', 15: 'terminated' };

function config(raw: unknown): ProcessConfig {
  const p = (raw ?? {}) as Partial<ProcessConfig>;
  if (typeof p.cmd !== 'string' || p.cmd === '') throw new ConnectError('invalid_argument', 'process.cmd must be a non-empty string');
  const args = Array.isArray(p.args) ? p.args.map(String) : [];
  const envs = p.envs && typeof p.envs === 'object' ? Object.fromEntries(Object.entries(p.envs).map(([k, v]) => [k, String(v)])) : {};
  return { cmd: p.cmd, args, envs, cwd: typeof p.cwd === 'string' && p.cwd !== '' ? p.cwd : undefined };
}

function ptySize(raw: unknown): { cols: number; rows: number } | undefined {
  const size = (raw as { size?: { cols?: unknown; rows?: unknown } } | undefined)?.size;
  if (!size) return undefined;
  const cols = Number(size.cols);
  const rows = Number(size.rows);
  if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols < 1 || rows < 1 || cols > 1000 || rows > 1000) {
    throw new ConnectError('invalid_argument', 'pty.size cols and rows must be integers from 1 to 1000');
  }
  return { cols, rows };
}

/** envd's end event: a process ended by a signal did not exit (exit code -1), as Go reports it. */
function endEvent(exit: SessionExit): Message {
  if (exit.signal) return { event: { end: { exitCode: -1, exited: false, status: `signal: ${SIGNAL_STATUS[exit.signal] ?? exit.signal}` } } };
  return { event: { end: { exitCode: exit.exitCode, exited: true, status: `exit status ${exit.exitCode}` } } };
}

/** envd's `process.Process` service over Sandpit's background sessions (they outlive the stream, as envd's processes do). */
export class ProcessRpc {
  readonly sandboxes: SandboxService;
  readonly sessions: SessionRegistry;
  readonly #extra = new WeakMap<Session, Extra>();
  /** A template's working directory (its last workdir step): where its commands start unless they say. */
  readonly #workdir: (templateId: string | null) => Promise<string | undefined>;

  constructor(sandboxes: SandboxService, sessions: SessionRegistry, workdir: (templateId: string | null) => Promise<string | undefined>) {
    this.sandboxes = sandboxes;
    this.sessions = sessions;
    this.#workdir = workdir;
  }

  /** The running process a selector names (by pid or tag); exited ones are gone, as in envd. */
  async #find(rec: SandboxRecord, selector: unknown): Promise<Session> {
    const sel = ((selector as { process?: { pid?: unknown; tag?: unknown } })?.process ?? {}) as { pid?: unknown; tag?: unknown };
    const { map } = await this.sessions.sessions(rec);
    for (const s of map.values()) {
      if (s.exit) continue;
      if (sel.pid !== undefined && s.pid === Number(sel.pid)) return s;
      if (sel.tag !== undefined && this.#extra.get(s)?.tag === sel.tag) return s;
    }
    throw new ConnectError('not_found', `process ${sel.pid !== undefined ? `with pid ${String(sel.pid)}` : `with tag '${String(sel.tag).slice(0, 64)}'`} not found`);
  }

  /** The live agent process of a session; one that ended in between counts as not found. */
  #live(s: Session) {
    try {
      return s.live();
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) throw new ConnectError('not_found', `process with pid ${s.pid} has exited`);
      throw err;
    }
  }

  start = async (req: FastifyRequest, msg: Message, ctx: StreamContext): Promise<void> => {
    const rec = await envdSandbox(this.sandboxes, req);
    const user = envdUser(req);
    const cfg = config(msg.process);
    const pty = ptySize(msg.pty);
    const s = await this.sessions.start(rec, {
      kind: pty ? 'terminal' : 'process',
      argv: [cfg.cmd, ...cfg.args],
      env: cfg.envs,
      cwd: cfg.cwd ?? (await this.#workdir(rec.templateId)) ?? homeOf(user),
      pty,
      user,
      outputBytes: pty ? TERMINAL_REPLAY_BYTES : PROCESS_OUTPUT_BYTES,
    });
    this.#extra.set(s, { config: cfg, tag: typeof msg.tag === 'string' ? msg.tag : undefined });
    // envd before 0.3.0 always kept stdin open; `stdin: false` (the SDK's default now) closes it.
    if (msg.stdin === false && !pty) s.proc?.closeStdin();
    ctx.send({ event: { start: { pid: s.pid } } });
    await this.#follow(s, ctx, true, pty !== undefined);
    // The command's time limit (Connect-Timeout-Ms) ends the command, not only the stream.
    if (ctx.signal.reason === 'deadline' && !s.exit) s.proc?.kill('SIGKILL');
  };

  connect = async (req: FastifyRequest, msg: Message, ctx: StreamContext): Promise<void> => {
    const rec = await envdSandbox(this.sandboxes, req);
    const s = await this.#find(rec, msg);
    ctx.send({ event: { start: { pid: s.pid } } });
    await this.#follow(s, ctx, false, s.meta.kind === 'terminal');
  };

  /**
   * Sends output (from the start when `replay`, else from now) and the end event; returns early when the
   * stream is aborted, and fails with StreamDropped when the agent connection is lost (the sandbox was deleted).
   */
  #follow(s: Session, ctx: StreamContext, replay: boolean, pty: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const proc = s.proc;
      const onOutput = (stream: 'stdout' | 'stderr', data: Buffer) => ctx.send({ event: { data: { [pty ? 'pty' : stream]: data.toString('base64') } } });
      const cleanup = () => {
        unsubscribe();
        proc?.off('error', onLost);
        ctx.signal.removeEventListener('abort', finish);
      };
      const finish = () => {
        cleanup();
        resolve();
      };
      const onLost = () => {
        cleanup();
        reject(new StreamDropped('the sandbox agent connection was lost'));
      };
      proc?.once('error', onLost);
      const onExit = (exit: SessionExit) => {
        ctx.send(endEvent(exit));
        queueMicrotask(finish);
      };
      let unsubscribe: () => void;
      if (replay) unsubscribe = s.subscribe(onOutput, onExit);
      else if (s.exit) {
        unsubscribe = () => {};
        onExit(s.exit);
      } else {
        s.on('output', onOutput);
        s.once('exit', onExit);
        unsubscribe = () => {
          s.off('output', onOutput);
          s.off('exit', onExit);
        };
      }
      if (ctx.signal.aborted) finish();
      else ctx.signal.addEventListener('abort', finish, { once: true });
    });
  }

  list = async (req: FastifyRequest): Promise<Message> => {
    const rec = await envdSandbox(this.sandboxes, req);
    const { map } = await this.sessions.sessions(rec);
    const processes = [...map.values()]
      .filter((s) => !s.exit)
      .map((s) => {
        const extra = this.#extra.get(s);
        const [cmd = '', ...args] = s.meta.argv;
        const info: Message = { config: extra?.config ?? { cmd, args, envs: {}, cwd: s.meta.cwd }, pid: s.pid };
        if (extra?.tag !== undefined) info.tag = extra.tag;
        return info;
      });
    return { processes };
  };

  sendInput = async (req: FastifyRequest, msg: Message): Promise<Message> => {
    const rec = await envdSandbox(this.sandboxes, req);
    const s = await this.#find(rec, msg);
    const input = (msg.input ?? {}) as { stdin?: unknown; pty?: unknown };
    const proc = this.#live(s);
    if (typeof input.pty === 'string') proc.write(Buffer.from(input.pty, 'base64'));
    else if (typeof input.stdin === 'string') {
      await proc.writeChecked(Buffer.from(input.stdin, 'base64')).catch((err: { code?: string; message?: string }) => {
        throw new ConnectError(err.code === 'EAGAIN' ? 'resource_exhausted' : 'unavailable', err.message ?? 'stdin write failed');
      });
    }
    return {};
  };

  sendSignal = async (req: FastifyRequest, msg: Message): Promise<Message> => {
    const rec = await envdSandbox(this.sandboxes, req);
    const s = await this.#find(rec, msg);
    const sig = typeof msg.signal === 'number' ? msg.signal : SIGNALS[String(msg.signal)];
    if (sig !== 9 && sig !== 15) throw new ConnectError('invalid_argument', 'signal must be SIGNAL_SIGKILL or SIGNAL_SIGTERM');
    this.#live(s).kill(sig);
    return {};
  };

  closeStdin = async (req: FastifyRequest, msg: Message): Promise<Message> => {
    const rec = await envdSandbox(this.sandboxes, req);
    this.#live(await this.#find(rec, msg)).closeStdin();
    return {};
  };

  /** Resizes a PTY (the only update envd has). */
  update = async (req: FastifyRequest, msg: Message): Promise<Message> => {
    const rec = await envdSandbox(this.sandboxes, req);
    const s = await this.#find(rec, msg);
    const size = ptySize(msg.pty);
    if (!size) return {};
    if (s.meta.kind !== 'terminal') throw new ConnectError('failed_precondition', `process with pid ${s.pid} has no PTY`);
    s.meta.cols = size.cols;
    s.meta.rows = size.rows;
    this.#live(s).resize(size.cols, size.rows);
    return {};
  };
}
