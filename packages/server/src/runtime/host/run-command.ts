import { spawn } from 'node:child_process';

export interface RunResult {
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Text written to the child's stdin, then closed. */
  input?: string;
  /** Called with each complete stdout/stderr line as it arrives (for progress). */
  onLine?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Runs a program without a shell; rejects with its stderr when it exits non-zero. */
export function runCommand(file: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      env: opts.env,
      cwd: opts.cwd,
    });
    let stdout = '';
    let stderr = '';
    let pending = '';
    const feed = (chunk: string): void => {
      if (!opts.onLine) return;
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) opts.onLine(line);
    };
    child.stdout?.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      feed(c);
    });
    child.stderr?.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
      feed(c);
    });
    if (opts.input !== undefined && child.stdin) child.stdin.end(opts.input);
    child.on('error', (err) => reject(new Error(`${file}: ${err.message}`)));
    child.on('close', (code, signal) => {
      if (pending && opts.onLine) opts.onLine(pending);
      if (code === 0) return resolve({ stdout, stderr });
      const why = signal ? `killed by ${signal}` : `exit code ${code}`;
      const detail = (stderr.trim() || stdout.trim()).split('\n').slice(-8).join('\n');
      reject(new Error(`${file} ${args.join(' ')} failed (${why})${detail ? `: ${detail}` : ''}`));
    });
  });
}
