import { spawn } from 'node:child_process';
import { freePort } from './server-process.ts';

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a client (ssh, scp, sftp) to its end, feeding `input` on stdin. */
export function run(cmd: string, args: string[], input = '', env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    // A client that exits before reading its input (a refused login) closes the pipe: not an error here.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** OpenSSH client options for tests: only `knownHosts` trusted (strictly), no agent or default keys, quiet. */
export function strictSshOptions(knownHosts: string, extra: string[] = []): string[] {
  return [
    '-o',
    `UserKnownHostsFile=${knownHosts}`,
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    'LogLevel=ERROR',
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'IdentityAgent=none',
    '-o',
    'ConnectTimeout=20',
    ...extra,
  ];
}

/** A shell command that serves `text` as GET / on port 8080 inside a sandbox (python's http.server, in the background). */
export const serveOn8080 = (text: string) =>
  `mkdir -p /tmp/www && echo ${text} > /tmp/www/index.html && cd /tmp/www && setsid python3 -m http.server 8080 --bind 0.0.0.0 >/dev/null 2>&1 < /dev/null & sleep 0.7`;

/**
 * GET / of port 8080 inside sandbox `id` through `ssh -N -L` to the gateway on `port` (OpenSSH with
 * `opts`): the body once the forward answers ('' if it never does within 10 s); the tunnel is ended after.
 */
export async function getThroughForward(opts: string[], port: number, id: string): Promise<string> {
  const local = await freePort();
  const tunnel = spawn('ssh', [...opts, '-N', '-o', 'ExitOnForwardFailure=yes', '-L', `127.0.0.1:${local}:localhost:8080`, '-p', String(port), `${id}@127.0.0.1`], { stdio: 'ignore' });
  try {
    for (let i = 0; i < 100; i++) {
      const body = await fetch(`http://127.0.0.1:${local}/`).then(
        (r) => r.text(),
        () => '',
      );
      if (body !== '') return body;
      await new Promise((r) => setTimeout(r, 100));
    }
    return '';
  } finally {
    tunnel.kill();
  }
}
