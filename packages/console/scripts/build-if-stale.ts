import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Builds the console when dist/ is missing or older than any source: fresh clones carry no build,
 * and `./sandpit up`, `./sandpit test` and the browser tests call this first.
 */
const root = new URL('..', import.meta.url).pathname;
const built = join(root, 'dist', 'index.html');

function newest(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

export function consoleIsStale(): boolean {
  let builtAt: number;
  try {
    builtAt = statSync(built).mtimeMs;
  } catch {
    return true;
  }
  return ['app', 'index.html', 'vite.config.ts', 'package.json'].some((p) => newest(join(root, p)) > builtAt);
}

export function buildConsole(): void {
  const vite = join(root, '..', '..', 'node_modules', 'vite', 'bin', 'vite.js');
  const res = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' });
  if (res.status !== 0) throw new Error(`console build failed (exit ${res.status})`);
}

if (process.argv[1] === new URL(import.meta.url).pathname && consoleIsStale()) buildConsole();
