import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { CLI, ServerProcess } from '../../server/test/helpers/server-process.ts';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('sandpit CLI against a real server', () => {
  let server: ServerProcess;

  before(async () => {
    server = await ServerProcess.start();
  });
  after(async () => {
    await server?.stop();
  });

  /** Runs the CLI as a user would, configured through the environment unless `env` says otherwise. */
  const sandpit = (args: string[], env: Record<string, string | undefined> = {}) =>
    new Promise<Ran>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { ...process.env, SANDPIT_API_URL: server.url, SANDPIT_API_KEY: server.key, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });

  const ok = async (args: string[], env?: Record<string, string | undefined>) => {
    const r = await sandpit(args, env);
    assert.equal(r.code, 0, `sandpit ${args.join(' ')} failed:\n${r.stderr}`);
    return r;
  };

  it('create -> exec with exit code passthrough -> pause/resume -> kill', async () => {
    const created = JSON.parse((await ok(['sandbox', 'create', '--json', '--name', 'cli-e2e', '--metadata', 'suite=cli'])).stdout);
    assert.match(created.id, /^sb-[a-z0-9]+-/);
    assert.equal(created.status, 'active');
    const id: string = created.id;

    const shell = await sandpit(['exec', id, '--', 'echo hi; echo oops >&2; exit 7']);
    assert.deepEqual(shell, { code: 7, stdout: 'hi\n', stderr: 'oops\n' });

    const argv = await ok(['exec', '--cwd', '/tmp', '--env', 'A=1', id, '--', 'sh', '-c', 'printf "%s %s" "$PWD" "$A"']);
    assert.equal(argv.stdout, '/tmp 1');

    const json = await sandpit(['exec', '--json', id, '--', 'echo out; exit 3']);
    assert.equal(json.code, 3);
    assert.deepEqual(JSON.parse(json.stdout), { stdout: 'out\n', stderr: '', exit_code: 3 });

    const listed = JSON.parse((await ok(['sandbox', 'list', '--json', '--metadata', 'suite=cli'])).stdout);
    assert.deepEqual(
      listed.map((s: { id: string }) => s.id),
      [id],
    );
    assert.match((await ok(['sandbox', 'list'])).stdout, new RegExp(`^ID +NAME +STATUS[^\\n]*\\n${id} +cli-e2e +active`));
    assert.match((await ok(['sandbox', 'get', id])).stdout, /status: +active/);

    assert.equal(JSON.parse((await ok(['sandbox', 'pause', '--json', id])).stdout).status, 'paused');
    assert.equal(JSON.parse((await ok(['sandbox', 'get', '--json', id])).stdout).status, 'paused');
    const again = await sandpit(['sandbox', 'pause', id]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /\[409 conflict\]/);
    assert.match((await ok(['sandbox', 'resume', id])).stdout, new RegExp(`${id} active`));
    assert.equal(JSON.parse((await ok(['sandbox', 'pause', '--disk-only', '--json', id])).stdout).kept_memory, false);
    assert.match((await ok(['sandbox', 'resume', id])).stdout, new RegExp(`${id} active`));
    await ok(['sandbox', 'pause', id]);
    assert.match((await ok(['sandbox', 'resume', '--boot', id])).stdout, new RegExp(`${id} active`));

    assert.equal((await ok(['sandbox', 'kill', id])).stdout, `killed ${id}\n`);
    assert.equal((await ok(['sandbox', 'kill', id])).stdout, `${id} was already gone\n`);

    const gone = await sandpit(['exec', id, '--', 'true']);
    assert.equal(gone.code, 255, 'a failure of sandpit itself is 255, not a command exit code');
    assert.match(gone.stderr, /\[404 not_found\]/);
  });

  it('API keys: create with fewer permissions, list, use, revoke', async () => {
    const created = JSON.parse((await ok(['key', 'create', 'reader', '--permission', 'sandboxes:read', '--json'])).stdout);
    assert.deepEqual(created.permissions, ['sandboxes:read']);
    assert.match(created.key, /\S{16,}/);

    const keys = JSON.parse((await ok(['key', 'list', '--json'])).stdout);
    assert.ok(keys.some((k: { id: string }) => k.id === created.id));
    assert.equal(keys.find((k: { id: string }) => k.id === created.id).key, undefined, 'list never shows the key');

    // Flags win over the environment.
    await ok(['sandbox', 'list', '--api-key', created.key]);
    const denied = await sandpit(['sandbox', 'create', '--api-key', created.key]);
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /\[403 forbidden\]/);

    assert.equal((await ok(['key', 'revoke', created.id])).stdout, `revoked ${created.id}\n`);
    const revoked = await sandpit(['sandbox', 'list', '--api-key', created.key]);
    assert.equal(revoked.code, 1);
    assert.match(revoked.stderr, /\[401 unauthorized\]/);
  });

  it('says what is missing without an API key', async () => {
    const r = await sandpit(['sandbox', 'list'], { SANDPIT_API_KEY: undefined });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no API key: pass --api-key or set SANDPIT_API_KEY/);
  });
});
