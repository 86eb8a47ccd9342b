import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ServerProcess } from '../../server/test/helpers/server-process.ts';

/** Debian's Python explicitly: a pyenv shim earlier on PATH would not see Debian's httpx, websockets and pytest. */
const PYTHON = '/usr/bin/python3';
const PACKAGE = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
/** What a checkout holds besides the source; never copied into the scratch build. */
const LEFTOVERS = new Set(['build', '__pycache__', '.mypy_cache', '.pytest_cache', 'test']);

interface Ran {
  code: number | null;
  output: string;
}

function run(cmd: string, args: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONPATH: undefined, ...opts.env };
    const child = spawn(cmd, args, { cwd: opts.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('Python SDK: installed with pip into a fresh venv, tested against a live server', () => {
  let server: ServerProcess;
  let scratch: string;
  let venvPython: string;
  let installed: Ran;
  let mypy: Promise<Ran & { ms: number }>;
  let serverMs = 0;
  let installMs = 0;

  /** Copies the package outside the repository and pip installs it into a fresh venv there. */
  async function install(): Promise<Ran> {
    const source = join(scratch, 'python-sdk');
    await cp(PACKAGE, source, { recursive: true, filter: (path) => !LEFTOVERS.has(basename(path)) && !path.endsWith('.egg-info') });
    // Without a pip of its own (seeding one costs more than the rest of the install): Debian's pip installs into it.
    const created = await run(PYTHON, ['-m', 'venv', '--without-pip', '--system-site-packages', join(scratch, 'venv')], { cwd: scratch });
    if (created.code !== 0) return created;
    // Offline: the build backend (setuptools, wheel) comes from Debian through --system-site-packages.
    return run(PYTHON, ['-m', 'pip', '--python', venvPython, 'install', '--no-index', '--no-build-isolation', '--disable-pip-version-check', source], { cwd: scratch });
  }

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'sandpit-python-sdk-'));
    venvPython = join(scratch, 'venv', 'bin', 'python');
    const started = Date.now();
    // Type checking, the server and the install do not depend on each other: they run at once.
    mypy = run(PYTHON, ['-m', 'mypy', '--cache-dir', join(scratch, 'mypy-cache')], { cwd: PACKAGE }).then((ran) => ({ ...ran, ms: Date.now() - started }));
    const [up, pip] = await Promise.allSettled([
      ServerProcess.start({ SANDPIT_DRIVER: 'container' }).then((s) => {
        server = s;
        serverMs = Date.now() - started;
      }),
      install().then((ran) => {
        installed = ran;
        installMs = Date.now() - started;
      }),
    ]);
    // Both settle before either failure is reported, so a started server is always there for after() to stop.
    for (const result of [up, pip]) if (result.status === 'rejected') throw result.reason;
  });

  after(async () => {
    await server?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('pip installs the package offline, outside the repository', async (t) => {
    t.diagnostic(`since the start: server ready after ${serverMs} ms, venv and pip install done after ${installMs} ms`);
    assert.equal(installed.code, 0, installed.output);
    const where = await run(venvPython, ['-c', 'import sandpit; print(sandpit.__file__)'], { cwd: scratch });
    assert.equal(where.code, 0, where.output);
    assert.ok(where.output.trim().startsWith(join(scratch, 'venv')), where.output);
  });

  it('passes its pytest suite against the live server, importing the installed package', async (t) => {
    const tests = await run(venvPython, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-rfEs', join(PACKAGE, 'test')], {
      cwd: scratch,
      env: { SANDPIT_API_URL: server.url, SANDPIT_API_KEY: server.key, SDK_TEST_INSTALL_PREFIX: join(scratch, 'venv') },
    });
    const summary = tests.output.trim().split('\n').at(-1) ?? '';
    t.diagnostic(`pytest: ${summary}`);
    assert.equal(tests.code, 0, tests.output);
    assert.match(summary, /^\d+ passed in /, tests.output);
  });

  it('type checks clean under mypy --strict', async (t) => {
    const checked = await mypy;
    t.diagnostic(`mypy took ${checked.ms} ms (alongside the rest)`);
    assert.equal(checked.code, 0, checked.output);
    assert.match(checked.output, /^Success: no issues found/m);
  });
});
