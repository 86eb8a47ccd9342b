import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ServerProcess } from '../../server/test/helpers/server-process.ts';
import { runCli } from './helpers/run-cli.ts';

describe('sandpit CLI resource commands against a real server (container driver)', () => {
  let server: ServerProcess;
  let dir: string;
  let id: string;

  const sandpit = (args: string[], input?: string) => runCli(server, args, input);

  const ok = async (args: string[], input?: string) => {
    const r = await sandpit(args, input);
    assert.equal(r.code, 0, `sandpit ${args.join(' ')} failed:\n${r.stderr}`);
    return r;
  };
  /** Adds --json before any `--`, after which everything is the remote command. */
  const json = async (args: string[], input?: string) => {
    const end = args.includes('--') ? args.indexOf('--') : args.length;
    return JSON.parse((await ok([...args.slice(0, end), '--json', ...args.slice(end)], input)).stdout);
  };

  before(async () => {
    server = await ServerProcess.start({ SANDPIT_DRIVER: 'container' });
    dir = await mkdtemp(join(tmpdir(), 'sandpit-cli-'));
    id = (await json(['sandbox', 'create'])).id;
  });
  after(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('cp: local -> sandbox -> local keeps every byte', async () => {
    const original = randomBytes(3 * 1024 * 1024 + 17);
    await writeFile(join(dir, 'blob.bin'), original);
    const up = await json(['cp', join(dir, 'blob.bin'), `${id}:inbox/`]);
    assert.deepEqual(up, { source: join(dir, 'blob.bin'), destination: `${id}:/home/user/inbox/blob.bin`, bytes: original.length });
    const down = await ok(['cp', `${id}:inbox/blob.bin`, `${dir}/`]);
    assert.match(down.stdout, /inbox\/blob\.bin -> .*blob\.bin \(3\.0 MiB\)/);
    assert.ok((await readFile(join(dir, 'blob.bin'))).equals(original));
    const missing = await sandpit(['cp', `${id}:/nope`, dir]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: .*\[404 not_found\]\n$/);
  });

  it('shell: a piped script runs in the terminal and its exit code passes through', async () => {
    const r = await sandpit(['shell', id], 'echo "sum=$((20+22))"\nexit 5\n');
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stdout, /sum=42/);
    const eof = await sandpit(['shell', id, '--command', 'bash --norc'], 'echo bye\n');
    assert.equal(eof.code, 0, eof.stderr);
    assert.match(eof.stdout, /bye/);
    // The input and its end arrive while the pty is still in line mode, before the shell's editor starts.
    const slow = await sandpit(['shell', id, '--command', 'sleep 1; exec bash --norc'], 'echo late\n');
    assert.equal(slow.code, 0, slow.stderr);
    assert.match(slow.stdout, /late/);
  });

  it('process start/list/logs/kill', async () => {
    const started = await json(['process', 'start', id, '--', 'echo started; sleep 30']);
    assert.equal(started.running, true);
    assert.ok((await json(['process', 'list', id])).some((p: { id: string }) => p.id === started.id));
    for (let i = 0; i < 50 && !(await ok(['process', 'logs', id, started.id])).stdout.includes('started'); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal((await ok(['process', 'logs', id, started.id])).stdout, 'started\n');
    assert.match((await ok(['process', 'kill', id, started.id, '--signal', 'TERM'])).stdout, /sent TERM/);
    assert.equal((await ok(['process', 'logs', '--follow', id, started.id])).stdout, 'started\n');
    assert.equal((await ok(['process', 'kill', id, started.id])).stdout, `killed ${started.id}\n`);
  });

  it('snapshot: 503 on the container driver; list --json', async () => {
    const refused = await sandpit(['snapshot', 'create', id, '--name', 'x']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^error: .*\[503 [a-z_]+\]\n$/);
    assert.deepEqual(await json(['snapshot', 'list']), []);
  });

  it('secret: the value from stdin is never printed; list --json; rm', async () => {
    const created = await ok(['secret', 'create', 'CLI_SECRET', '--allowed-host', 'api.example.com'], 'top-secret-value\n');
    assert.doesNotMatch(created.stdout + created.stderr, /top-secret-value/);
    assert.deepEqual(
      (await json(['secret', 'list'])).map((s: { name: string; allowed_hosts: string[] }) => [s.name, s.allowed_hosts]),
      [['CLI_SECRET', ['api.example.com']]],
    );
    await ok(['secret', 'rm', 'CLI_SECRET']);
    assert.deepEqual(await json(['secret', 'list']), []);
  });

  it('template: create -f follows the build; list --json; get; logs; rm', async () => {
    const recipe = join(dir, 'recipe.json');
    await writeFile(
      recipe,
      JSON.stringify({
        name: 'cli-tiny',
        steps: [
          { type: 'env', env: { FROM: 'cli' } },
          { type: 'run', command: 'echo hi-from-build' },
        ],
      }),
    );
    const built = await ok(['template', 'create', '-f', recipe]);
    assert.match(built.stdout, /^cli-tiny ready\n$/);
    assert.match(built.stderr, /hi-from-build/);
    assert.ok((await json(['template', 'list'])).some((t: { name: string }) => t.name === 'cli-tiny'));
    assert.equal((await json(['template', 'get', 'cli-tiny'])).status, 'ready');
    assert.match((await ok(['template', 'logs', 'cli-tiny'])).stdout, /hi-from-build/);
    // A rebuild takes the cached layer; --no-cache runs the step again.
    assert.doesNotMatch((await ok(['template', 'create', '-f', recipe])).stderr, /hi-from-build/);
    assert.match((await ok(['template', 'create', '-f', recipe, '--no-cache'])).stderr, /hi-from-build/);
    const sb = await json(['sandbox', 'create', '--template', 'cli-tiny']);
    assert.equal((await ok(['exec', sb.id, '--', 'echo $FROM'])).stdout, 'cli\n');
    await ok(['sandbox', 'kill', sb.id]);
    assert.equal((await ok(['template', 'rm', 'cli-tiny'])).stdout, 'deleted cli-tiny\n');
  });

  it('preview publish/list/rm', async () => {
    const p = await json(['preview', 'publish', id, '3000', '--access', 'public']);
    assert.equal(p.port, 3000);
    assert.deepEqual(
      (await json(['preview', 'list', id])).map((x: { port: number }) => x.port),
      [3000],
    );
    await ok(['preview', 'rm', id, '3000']);
    assert.deepEqual(await json(['preview', 'list', id]), []);
  });
});
