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
  let mypy: Promise<Ran>;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'sandpit-python-sdk-'));
    // Type checking needs no server: it runs alongside the rest.
    mypy = run(PYTHON, ['-m', 'mypy', '--cache-dir', join(scratch, 'mypy-cache')], { cwd: PACKAGE });
    server = await ServerProcess.start({ SANDPIT_DRIVER: 'container' });
    const source = join(scratch, 'python-sdk');
    await cp(PACKAGE, source, { recursive: true, filter: (path) => !LEFTOVERS.has(basename(path)) && !path.endsWith('.egg-info') });
    const venv = join(scratch, 'venv');
    // Without a pip of its own (seeding one costs more than the rest of the install): Debian's pip installs into it.
    const created = await run(PYTHON, ['-m', 'venv', '--without-pip', '--system-site-packages', venv], { cwd: scratch });
    assert.equal(created.code, 0, created.output);
    venvPython = join(venv, 'bin', 'python');
    // Offline: the build backend (setuptools, wheel) comes from Debian through --system-site-packages.
    const pip = ['-m', 'pip', '--python', venvPython, 'install', '--no-index', '--no-build-isolation', '--disable-pip-version-check', source];
    installed = await run(PYTHON, pip, { cwd: scratch });
  });

  after(async () => {
    await server?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('pip installs the package offline, outside the repository', async () => {
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

  it('type checks clean under mypy --strict', async () => {
    const checked = await mypy;
    assert.equal(checked.code, 0, checked.output);
    assert.match(checked.output, /^Success: no issues found/m);
  });
});
