import { constants as osConstants } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { iso } from '../../clock.ts';
import { badRequest, conflict, unavailable } from '../../errors.ts';
import type { AgentError } from '../../runtime/agent-client.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';
import type { StreamEvent } from '../../schemas/exec.ts';
import type { ProcessBody, ProcessInfo } from '../../schemas/process.ts';
import { PROCESS_OUTPUT_BYTES, type Session, type SessionExit, type SessionRegistry, type StreamName } from './sessions.ts';

/** Background processes: started without waiting, listed, read, streamed, fed and signalled. */
export class ProcessService {
  readonly sessions: SessionRegistry;

  constructor(sessions: SessionRegistry) {
    this.sessions = sessions;
  }

  info(s: Session): ProcessInfo {
    const [command = '', ...args] = s.meta.argv;
    const out: ProcessInfo = {
      id: s.id,
      pid: s.pid,
      command,
      args,
      working_dir: s.meta.cwd,
      started_at: iso(s.meta.startedAt),
      running: !s.exit,
    };
    if (s.exit) out.exit_code = s.exit.exitCode;
    if (s.exit?.signal) out.signal = s.exit.signal;
    return out;
  }

  async start(rec: SandboxRecord, body: ProcessBody): Promise<ProcessInfo> {
    const argv = body.args ? [body.command, ...body.args] : ['/bin/sh', '-c', body.command];
    const s = await this.sessions.start(rec, { kind: 'process', argv, env: body.env, cwd: body.working_dir, outputBytes: PROCESS_OUTPUT_BYTES });
    return this.info(s);
  }

  async list(rec: SandboxRecord): Promise<ProcessInfo[]> {
    return (await this.sessions.list(rec, 'process')).map((s) => this.info(s));
  }

  async get(rec: SandboxRecord, id: string): Promise<ProcessInfo> {
    return this.info(await this.sessions.get(rec, 'process', id));
  }

  /** Output kept so far (the last 1 MiB); invalid UTF-8 becomes U+FFFD. */
  async output(rec: SandboxRecord, id: string) {
    const s = await this.sessions.get(rec, 'process', id);
    const pick = (name: StreamName) => Buffer.concat(s.log.chunks.filter((c) => c.stream === name).map((c) => c.data)).toString('utf8');
    return { ...this.info(s), stdout: pick('stdout'), stderr: pick('stderr'), dropped_bytes: s.log.dropped };
  }

  /** Kept output as events, then live ones, ending with a finished event; aborting only detaches. */
  async stream(rec: SandboxRecord, id: string): Promise<(send: (ev: StreamEvent) => void, signal: AbortSignal) => Promise<void>> {
    const s = await this.sessions.get(rec, 'process', id);
    const clock = this.sessions.clock;
    return (send, signal) =>
      new Promise<void>((resolve) => {
        const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
        let finished = false;
        const finish = (exit: SessionExit | undefined) => {
          if (finished) return;
          finished = true;
          unsubscribe();
          for (const name of ['stdout', 'stderr'] as const) {
            const rest = decoders[name].end();
            if (rest) send({ timestamp: iso(clock.now()), [name]: rest });
          }
          if (exit) send({ timestamp: iso(clock.now()), exit_code: exit.exitCode, finished: true });
          resolve();
        };
        let unsubscribe = () => {};
        let done = false;
        unsubscribe = s.subscribe(
          (name, data) => {
            const text = decoders[name].write(data);
            if (text) send({ timestamp: iso(clock.now()), [name]: text });
          },
          (exit) => {
            done = true;
            queueMicrotask(() => finish(exit));
          },
        );
        if (!done) signal.addEventListener('abort', () => finish(undefined), { once: true });
      });
  }

  async writeStdin(rec: SandboxRecord, id: string, data: Buffer, eof: boolean): Promise<void> {
    const s = await this.sessions.get(rec, 'process', id);
    const proc = s.live();
    if (data.length) {
      await proc.writeChecked(data).catch((err: AgentError) => {
        throw err.code === 'EAGAIN' ? conflict(err.message) : unavailable(err.message);
      });
    }
    if (eof) proc.closeStdin();
  }

  async signal(rec: SandboxRecord, id: string, signal: string | number): Promise<void> {
    const s = await this.sessions.get(rec, 'process', id);
    const num = typeof signal === 'number' ? signal : osConstants.signals[signal.toUpperCase().replace(/^(?!SIG)/, 'SIG') as NodeJS.Signals];
    if (num === undefined || num < 1 || num > 64) throw badRequest(`unknown signal '${signal}'`);
    s.live().kill(num);
  }

  remove(rec: SandboxRecord, id: string): Promise<void> {
    return this.sessions.remove(rec, 'process', id);
  }
}
