import type { AgentClient } from '../agent-client.ts';

/** One `find` over every process's descriptors: a shell loop would fork per process, several ms each under ptrace. */
const FIND_FDS = ['find', '/proc', '-mindepth', '3', '-maxdepth', '3', '-path', '/proc/[0-9]*/fd/*', '-type', 'l', '-printf', '%h %l\\n'];
const RUN_TIMEOUT_MS = 5000;
/**
 * FIND_FDS through runsc, which fails a call whose exit code is not 0: find answers 1 when a descriptor
 * goes while it walks (its own always do), after printing the rest. A find that could not run at all (127) still fails.
 */
const FIND_FDS_VIA_RUNSC = ['sh', '-c', 'find "$@" 2>/dev/null; test $? -le 1', 'sh', ...FIND_FDS.slice(1)];

/**
 * Every descriptor of every process in the sandbox, a line each: `/proc/<pid>/fd <target>`. The agent
 * reads them itself; an agent from before that request (a sandbox restored from an older capture), or
 * too many to answer at once, gets `find` run instead.
 */
async function processDescriptors(control: AgentClient | undefined, viaRunsc: (argv: string[]) => Promise<string>): Promise<string> {
  if (!control) return viaRunsc(FIND_FDS_VIA_RUNSC);
  try {
    return (await control.descriptors()).toString('utf8');
  } catch {
    return run(control, FIND_FDS);
  }
}

/** What one save asks of the sandbox's processes: their descriptors, read at most once, and their names. */
export interface SandboxProcesses {
  descriptors(): Promise<string>;
  name(pid: string): Promise<string>;
}

/** The processes of a sandbox through its agent (`control`), or through runsc when it has none. */
export function sandboxProcesses(control: AgentClient | undefined, viaRunsc: (argv: string[]) => Promise<string>): SandboxProcesses {
  let read: Promise<string> | undefined;
  return {
    descriptors: () => (read ??= processDescriptors(control, viaRunsc)),
    name: (pid) => processName(control, pid),
  };
}

/** `pid (comm)`, or the pid alone when the agent cannot say. */
async function processName(control: AgentClient | undefined, pid: string): Promise<string> {
  const comm = control ? await control.readSmall(`/proc/${pid}/comm`).catch(() => undefined) : undefined;
  return comm ? `${pid} (${comm.toString('utf8').trim()})` : pid;
}

/** Runs `argv` as root through the agent and answers its stdout. */
function run(control: AgentClient, argv: string[]): Promise<string> {
  const proc = control.spawn({ argv, user: 'root', stdin: false, timeoutMs: RUN_TIMEOUT_MS });
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    proc.on('stdout', (b: Buffer) => out.push(b));
    proc.once('error', reject);
    proc.once('exit', () => resolve(Buffer.concat(out).toString('utf8')));
  });
}
