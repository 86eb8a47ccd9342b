import { type AgentClient, fileFailure } from '../../runtime/agent-client.ts';

/**
 * Where a sandbox's own env (given at create, with its secrets' tokens) is kept as a JSON object, owned
 * by root: in the platform's directory, so it is no change of the sandbox's (data-plane/changes.ts).
 */
export const SANDBOX_ENV_FILE = '/.sandpit/env.json';

/**
 * Gives a sandbox whose processes already run (restored from its template's capture, or pre-started)
 * its env: the default of every later process, and SANDBOX_ENV_FILE for those running, which
 * inherited the template's. E2B's services learn it from envd (`GET /envs`): Sandpit's code
 * interpreter, running since the capture, reads the file (templates/code-interpreter/sandbox_env.py).
 */
export async function giveSandboxEnv(agent: AgentClient, env: Record<string, string>): Promise<void> {
  await Promise.all([agent.setEnv(env), writeAsRoot(agent, SANDBOX_ENV_FILE, JSON.stringify(env))]);
}

function writeAsRoot(agent: AgentClient, path: string, content: string): Promise<void> {
  const proc = agent.file({ op: 'write', path, user: 'root' });
  const stderr: Buffer[] = [];
  proc.on('stderr', (b) => stderr.push(b));
  return new Promise((resolve, reject) => {
    proc.once('spawn', () => {
      proc.write(content);
      proc.closeStdin();
    });
    proc.once('error', reject);
    proc.once('exit', (info) => {
      const failure = fileFailure(info, Buffer.concat(stderr));
      if (failure) reject(failure);
      else resolve();
    });
  });
}
