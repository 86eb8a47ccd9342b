import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentClient, AgentProcess } from '../runtime/agent-client.ts';
import type { AgentPool } from '../runtime/agent-pool.ts';
import { SANDBOX_HOME } from './sandbox-user.ts';

/** What a sandbox of a template runs once it is up. */
export interface BootCommands {
  startCmd?: string;
  readyCmd?: string;
  readyTimeoutS: number;
  workdir?: string;
}

/** start_cmd ended or ready_cmd never passed; `code` is the contract's build failure code. */
export class BootError extends Error {
  readonly code: 'start_cmd_failed' | 'ready_cmd_failed';
  constructor(code: 'start_cmd_failed' | 'ready_cmd_failed', message: string) {
    super(message);
    this.code = code;
  }
}

export const START_PROCESS_NAME = 'start_cmd';
/** Output of a failing ready_cmd kept for the error detail. */
const TAIL_BYTES = 2000;

/**
 * Starts start_cmd as a named background process (it outlives this connection)
 * and polls ready_cmd until it exits 0, within readyTimeoutS. Polls start at
 * 5 ms and back off to 250 ms, so a quick server is seen ready at once.
 * `minUptimeMs`: without a ready_cmd, how long start_cmd must stay up to count as started.
 */
export async function startAndWaitReady(client: AgentClient, cmds: BootCommands, opts: { onOutput?: (source: string, text: string) => void; minUptimeMs?: number } = {}): Promise<void> {
  const cwd = cmds.workdir ?? SANDBOX_HOME;
  let startExit: string | undefined;
  let started: AgentProcess | undefined;
  if (cmds.startCmd) {
    started = client.spawn({ argv: ['/bin/sh', '-c', cmds.startCmd], user: 'user', cwd, background: true, name: START_PROCESS_NAME, stdin: false });
    const out = (d: Buffer) => opts.onOutput?.('start_cmd', d.toString());
    started.on('stdout', out);
    started.on('stderr', out);
    started.once('exit', (info) => {
      // A start_cmd that did its job and ended is fine where a ready_cmd decides readiness.
      if (info.exitCode === 0 && !info.signal && cmds.readyCmd) return;
      startExit = `start_cmd exited with code ${info.exitCode}${info.signal ? ` (signal ${info.signal})` : ''} before the sandbox was ready`;
    });
    started.once('error', (err) => (startExit = `start_cmd could not be started: ${err.message}`));
  }
  const deadline = performance.now() + cmds.readyTimeoutS * 1000;
  if (!cmds.readyCmd) {
    if (started && opts.minUptimeMs) await sleep(opts.minUptimeMs);
    if (startExit) throw new BootError('start_cmd_failed', startExit);
    return;
  }
  let delay = 5;
  let last = '';
  for (;;) {
    if (startExit) throw new BootError('start_cmd_failed', startExit);
    const remaining = deadline - performance.now();
    if (remaining <= 0) {
      throw new BootError('ready_cmd_failed', `ready_cmd did not succeed within ${cmds.readyTimeoutS} s${last ? `; last attempt: ${last}` : ''}`);
    }
    // One attempt may take what is left (E2B's waitForTimeout is a `sleep`).
    const r = await runOnce(client, cmds.readyCmd, cwd, Math.max(1000, remaining));
    if (r.exitCode === 0 && !startExit) return;
    last = `exit ${r.exitCode}${r.output ? `: ${r.output.trim().slice(-TAIL_BYTES)}` : ''}`;
    opts.onOutput?.('ready_cmd', `${last}\n`);
    await sleep(Math.min(delay, Math.max(0, deadline - performance.now())));
    delay = Math.min(delay * 2, 250);
  }
}

function runOnce(client: AgentClient, command: string, cwd: string, timeoutMs: number): Promise<{ exitCode: number; output: string }> {
  return new Promise((resolve) => {
    const p = client.spawn({ argv: ['/bin/sh', '-c', command], user: 'user', cwd, timeoutMs: Math.ceil(timeoutMs), stdin: false });
    let output = '';
    const keep = (d: Buffer) => {
      output = (output + d.toString()).slice(-TAIL_BYTES);
    };
    p.on('stdout', keep);
    p.on('stderr', keep);
    p.once('exit', (info) => resolve({ exitCode: info.timedOut ? 124 : info.exitCode, output }));
    p.once('error', (err) => resolve({ exitCode: 127, output: err.message }));
  });
}

/** Starts start_cmd and waits for ready_cmd in a freshly created sandbox; a create returns only after this. */
export async function bootSandbox(agents: AgentPool, sandboxId: string, t: BootCommands): Promise<void> {
  if (!t.startCmd && !t.readyCmd) return;
  const client = await agents.get(sandboxId, 10_000);
  await startAndWaitReady(client, t);
}
