import { spawn } from 'node:child_process';

/** `n` busy loops standing for the rest of a loaded host; the function returned ends them (by PID). */
export function busyLoops(n: number): () => void {
  const loops = Array.from({ length: n }, () => spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
  return () => {
    for (const loop of loops) loop.kill('SIGKILL');
  };
}
