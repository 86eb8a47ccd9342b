import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Api, CLI, ServerProcess } from '../../server/test/helpers/server-process.ts';

interface Ran {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

describe('sandpit volume against a real server (container driver)', () => {
  let server: ServerProcess;
  let api: Api;
  let dir: string;

  /** Runs the CLI as a user would; `input` is piped to its stdin, stdout is kept as bytes. A hung command fails with what it printed. */
  const sandpit = (args: string[], input?: Buffer | string) =>
    new Promise<Ran>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { ...process.env, SANDPIT_API_URL: server.url, SANDPIT_API_KEY: server.key },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const stdout: Buffer[] = [];
      let stderr = '';
      const hung = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`sandpit ${args.join(' ')} did not finish in 60 s:\n${stderr}`));
      }, 60_000);
      child.stdout.on('data', (d: Buffer) => stdout.push(d));
      child.stderr.on('data', (d) => (stderr += d));
      child.once('error', reject);
      child.once('close', (code) => {
        clearTimeout(hung);
        resolve({ code, stdout: Buffer.concat(stdout), stderr });
      });
      child.stdin.end(input ?? '');
    });

  const ok = async (args: string[], input?: Buffer | string) => {
    const r = await sandpit(args, input);
    assert.equal(r.code, 0, `sandpit ${args.join(' ')} failed:\n${r.stderr}`);
    return r;
  };
  const json = async (args: string[], input?: Buffer | string) => JSON.parse((await ok([...args, '--json'], input)).stdout.toString());
  /** A failure: exit code 1 and one line naming the API's status and code. */
  const fails = async (args: string[], status: number, code: string) => {
    const r = await sandpit(args);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^error: .*\\[${status} ${code}\\]\\n$`));
  };

  before(async () => {
    server = await ServerProcess.start({ SANDPIT_DRIVER: 'container' });
    api = new Api(server.url, server.key);
    dir = await mkdtemp(join(tmpdir(), 'sandpit-cli-volumes-'));
  });
  after(async () => {
    try {
      if (api) {
        for (const sb of (await api.get('/sandboxes?limit=1000')).body.sandboxes ?? []) await api.del(`/sandboxes/${sb.id}`);
        for (const v of (await api.get('/volumes?limit=1000')).body.volumes ?? []) await api.del(`/volumes/${v.id}`);
      }
    } finally {
      await server?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    }
  });

  it('create, ls, get, grow, rm; a taken name and bad input fail with the API code', async () => {
    const made = await json(['volume', 'create', 'cli-a', '--size', '4']);
    assert.deepEqual([made.name, made.size_mib, made.mounted_by], ['cli-a', 4, []]);
    assert.match((await ok(['volume', 'create', 'cli-b', '--size', '4'])).stdout.toString(), /^created volume [0-9a-f-]{36} cli-b 4 MiB, [\d.]+ (B|KiB) used\n$/);
    assert.deepEqual(
      (await json(['volume', 'ls'])).map((v: { name: string }) => v.name),
      ['cli-b', 'cli-a'],
    );
    assert.match((await ok(['volume', 'ls'])).stdout.toString(), /^ID +NAME +SIZE +USED +MOUNTED BY +CREATED\n.*cli-b +4 MiB +[\d.]+ (B|KiB) +0 /);
    assert.equal((await json(['volume', 'get', made.id])).name, 'cli-a');
    assert.equal((await json(['volume', 'grow', 'cli-a', '--size', '8'])).size_mib, 8);

    await fails(['volume', 'create', 'cli-a', '--size', '4'], 409, 'conflict');
    await fails(['volume', 'create', '../x', '--size', '4'], 400, 'bad_request');
    await fails(['volume', 'grow', 'cli-a', '--size', '2'], 400, 'bad_request');
    await fails(['volume', 'get', 'nope'], 404, 'not_found');
    const noSize = await sandpit(['volume', 'create', 'cli-c']);
    assert.notEqual(noSize.code, 0);
    assert.match(noSize.stderr, /--size/);

    assert.deepEqual(await json(['volume', 'rm', 'cli-a', 'cli-b']), [
      { volume: 'cli-a', deleted: true },
      { volume: 'cli-b', deleted: true },
    ]);
    const gone = await sandpit(['volume', 'rm', 'cli-a']);
    assert.equal(gone.code, 1);
    assert.equal(gone.stderr, 'error: no volume cli-a\n');
    assert.deepEqual(await json(['volume', 'ls']), []);
  });

  it('put from a file and from stdin, cat to stdout byte for byte, files, rm-file; a file over the quota is a 507', async () => {
    await json(['volume', 'create', 'cli-files', '--size', '8']);
    const blob = randomBytes(2 * 1024 * 1024 + 5);
    await writeFile(join(dir, 'blob.bin'), blob);
    const up = await json(['volume', 'put', 'cli-files', join(dir, 'blob.bin'), 'in/blob.bin']);
    assert.deepEqual([up.path, up.size], ['/in/blob.bin', blob.length]);
    assert.ok((await ok(['volume', 'cat', 'cli-files', 'in/blob.bin'])).stdout.equals(blob));

    assert.match((await ok(['volume', 'put', 'cli-files', '-', '/in/piped.txt'], 'through a pipe\n')).stdout.toString(), /^stdin -> cli-files:\/in\/piped\.txt \(15 B\)\n$/);
    assert.equal((await ok(['volume', 'cat', 'cli-files', '/in/piped.txt'])).stdout.toString(), 'through a pipe\n');

    assert.deepEqual(
      (await json(['volume', 'files', 'cli-files', 'in'])).map((e: { name: string; size: number }) => [e.name, e.size]),
      [
        ['blob.bin', blob.length],
        ['piped.txt', 15],
      ],
    );
    assert.match((await ok(['volume', 'files', 'cli-files'])).stdout.toString(), /^TYPE +SIZE +MODIFIED +PATH\ndir +- +\S+ +\/in\n$/);

    await ok(['volume', 'rm-file', 'cli-files', 'in/piped.txt']);
    await fails(['volume', 'cat', 'cli-files', 'in/piped.txt'], 404, 'not_found');
    await fails(['volume', 'rm-file', 'cli-files', 'in'], 409, 'conflict');

    await json(['volume', 'create', 'cli-small', '--size', '1']);
    await fails(['volume', 'put', 'cli-small', join(dir, 'blob.bin'), 'too-big.bin'], 507, 'insufficient_storage');
    assert.deepEqual(await json(['volume', 'files', 'cli-small']), []);
  });

  it('sandbox create --volume mounts it (read-only with :ro); rm of a mounted volume is refused', async () => {
    await json(['volume', 'create', 'cli-mounted', '--size', '8']);
    await ok(['volume', 'put', 'cli-mounted', '-', 'hello.txt'], 'mounted\n');
    const bad = await sandpit(['sandbox', 'create', '--volume', 'no-path']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /expected <volume>:<path>\[:ro\]/);

    const sb = await json(['sandbox', 'create', '--volume', 'cli-mounted:/data', '--volume', 'cli-mounted:/ro:ro']);
    const seen = await ok(['exec', sb.id, '--', 'sh', '-c', 'cat /data/hello.txt; touch /ro/x 2>/dev/null || echo read-only']);
    assert.equal(seen.stdout.toString(), 'mounted\nread-only\n');
    await fails(['volume', 'rm', 'cli-mounted'], 409, 'conflict');
    assert.deepEqual((await json(['volume', 'get', 'cli-mounted'])).mounted_by.length, 1);
    await ok(['sandbox', 'rm', sb.id]);
    await ok(['volume', 'rm', 'cli-mounted']);
  });
});
