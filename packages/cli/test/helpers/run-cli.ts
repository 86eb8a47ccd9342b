import { spawn } from 'node:child_process';
import { CLI, type ServerProcess } from '../../../server/test/helpers/server-process.ts';

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI against `server` as a user would; `input` is piped to its stdin. A hung command fails with what it printed. */
export function runCli(server: ServerProcess, args: string[], input?: string): Promise<Ran> {
  return new Promise<Ran>((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, SANDPIT_API_URL: server.url, SANDPIT_API_KEY: server.key },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const hung = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`sandpit ${args.join(' ')} did not finish in 60 s:\n${stdout}\n${stderr}`));
    }, 60_000);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(hung);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input ?? '');
  });
}
