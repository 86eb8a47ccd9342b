import { StringDecoder } from 'node:string_decoder';
import { iso, type Clock } from '../../clock.ts';
import type { AgentProcess, ExitInfo } from '../../runtime/agent-client.ts';
import { AGENT_PATH } from '../../runtime/host/oci-config.ts';
import type { ExecBody, ExecResult, StreamEvent } from '../../schemas/exec.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';
import { SANDBOX_HOME } from '../../templates/sandbox-user.ts';
import type { TemplateCatalog } from '../templates/template-catalog.ts';
import type { SandboxService } from '../sandboxes/sandboxes.ts';
import { inSpan } from '../../tracing.ts';

/** Combined stdout+stderr kept by a run-to-completion exec; the rest is dropped. */
export const EXEC_RETAINED_BYTES = 8 * 1024 * 1024;
export const DEFAULT_TIMEOUT_S = 30;
/** Exit code reported when the platform killed a command at its timeout (as GNU timeout does). */
export const TIMEOUT_EXIT_CODE = 124;

export interface RunningExec {
  proc: AgentProcess;
  timeoutS: number;
}

/** How a command ended, before it is shaped into a result or a final event. */
interface Ending {
  exitCode: number;
  error?: string;
}

/** Runs commands in a sandbox through its agent: to completion, or streamed. */
export class ExecService {
  /** The agent binary inside every sandbox, whose own tools (`--screenshot`) run as commands. */
  readonly agentPath = AGENT_PATH;
  readonly sandboxes: SandboxService;
  readonly templates: TemplateCatalog;
  readonly clock: Clock;

  constructor(sandboxes: SandboxService, templates: TemplateCatalog, clock: Clock) {
    this.sandboxes = sandboxes;
    this.templates = templates;
    this.clock = clock;
  }

  /** Starts the command; fails with an API error before any output exists. */
  async open(rec: SandboxRecord, body: ExecBody): Promise<RunningExec> {
    const { live, client } = await this.sandboxes.withAgent(rec);
    const timeoutS = body.timeout_s ?? DEFAULT_TIMEOUT_S;
    const proc = client.spawn({
      argv: body.args ? [body.command, ...body.args] : ['/bin/sh', '-c', body.command],
      env: body.env,
      // A template's workdir step sets where its sandboxes' commands start.
      cwd: body.working_dir ?? (await this.templates.workdir(live.templateId)) ?? SANDBOX_HOME,
      user: 'user',
      timeoutMs: timeoutS * 1000,
      stdin: false,
    });
    return { proc, timeoutS };
  }

  /** Resolves with how the process ended; spawn failures become exit codes like a shell's. */
  #ending(proc: AgentProcess, timeoutS: number): Promise<Ending> {
    return new Promise((resolve) => {
      proc.once('exit', (info: ExitInfo) => {
        if (info.timedOut) resolve({ exitCode: TIMEOUT_EXIT_CODE, error: `command timed out after ${timeoutS} s; its process group was killed` });
        else resolve({ exitCode: info.exitCode });
      });
      proc.once('error', (err: Error & { code?: string }) => {
        const exitCode = err.code === 'ENOENT' ? 127 : 126;
        resolve({ exitCode, error: err.message });
      });
    });
  }

  run(rec: SandboxRecord, body: ExecBody): Promise<ExecResult> {
    return inSpan('agent.exec', () => this.#run(rec, body));
  }

  async #run(rec: SandboxRecord, body: ExecBody): Promise<ExecResult> {
    const { proc, timeoutS } = await this.open(rec, body);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    const keep = (into: Buffer[]) => (chunk: Buffer) => {
      const room = EXEC_RETAINED_BYTES - kept;
      if (chunk.length > room) truncated = true;
      if (room <= 0) return;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      into.push(part);
      kept += part.length;
    };
    proc.on('stdout', keep(out));
    proc.on('stderr', keep(err));
    const end = await this.#ending(proc, timeoutS);
    // TextDecoder without `fatal` replaces invalid UTF-8 with U+FFFD.
    const dec = new TextDecoder('utf-8');
    let stderr = dec.decode(Buffer.concat(err));
    if (end.error) stderr += `${stderr && !stderr.endsWith('\n') ? '\n' : ''}sandpit: ${end.error}\n`;
    if (truncated) {
      stderr += `${stderr && !stderr.endsWith('\n') ? '\n' : ''}sandpit: output truncated: stdout and stderr together exceeded 8 MiB and the rest was dropped; use /exec/stream for unbounded output\n`;
    }
    const result: ExecResult = { stdout: dec.decode(Buffer.concat(out)), stderr, exit_code: end.exitCode };
    if (truncated) result.truncated = true;
    return result;
  }

  /** Streams an opened command's output as events; `signal` aborting (client gone) kills its process group. */
  async stream({ proc, timeoutS }: RunningExec, send: (ev: StreamEvent) => void, signal: AbortSignal): Promise<void> {
    const onAbort = () => proc.kill('SIGKILL');
    signal.addEventListener('abort', onAbort, { once: true });
    // StringDecoder keeps a split multi-byte character until its remaining bytes arrive.
    const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    for (const name of ['stdout', 'stderr'] as const) {
      proc.on(name, (chunk: Buffer) => {
        const text = decoders[name].write(chunk);
        if (text) send({ timestamp: iso(this.clock.now()), [name]: text });
      });
    }
    const end = await this.#ending(proc, timeoutS);
    signal.removeEventListener('abort', onAbort);
    for (const name of ['stdout', 'stderr'] as const) {
      const rest = decoders[name].end();
      if (rest) send({ timestamp: iso(this.clock.now()), [name]: rest });
    }
    const final: StreamEvent = { timestamp: iso(this.clock.now()), exit_code: end.exitCode, finished: true };
    if (end.error) final.error = end.error;
    send(final);
  }
}
