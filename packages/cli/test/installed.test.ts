import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { nodeBin, pack, run } from '../../sdk/test/helpers/runtimes.ts';
import { ServerProcess } from '../../server/test/helpers/server-process.ts';

// The CLI as a user gets it: `npm i -g` of its tarball, run from a directory outside the repository.
describe('the packed CLI, installed globally', () => {
  let work: string;
  let prefix: string;
  let server: ServerProcess;
  let starting: Promise<ServerProcess> | undefined;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'sandpit-cli-installed-'));
    prefix = join(work, 'global');
    const install = async () => {
      const tarball = await pack('cli', work);
      // Installed with Node 20's own npm, the oldest supported; its dependencies come from the registry (or npm's cache).
      const installed = await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], {
        cwd: work,
        env: { PATH: `${nodeBin(20)}:${process.env.PATH}` },
      });
      assert.equal(installed.code, 0, installed.stderr);
    };
    starting = ServerProcess.start({ SANDPIT_DRIVER: 'container' });
    [, server] = await Promise.all([install(), starting]);
  });

  after(async () => {
    // Also a server that was still starting when the install failed.
    await (server ?? (await starting?.catch(() => undefined)))?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const sandpit = (major: 20 | 22 | 24, args: string[]) =>
    run(join(prefix, 'bin/sandpit'), args, { cwd: work, env: { PATH: `${nodeBin(major)}:${process.env.PATH}`, SANDPIT_API_URL: server.url, SANDPIT_API_KEY: server.key } });

  it('ships built JavaScript only, with the SDK inside', async () => {
    const files = await readdir(join(prefix, 'lib/node_modules/@sandpit/cli'), { recursive: true });
    const own = files.filter((f) => !f.startsWith('node_modules'));
    assert.ok(own.includes('dist/main.js'));
    assert.deepEqual(own.filter((f) => !/^dist\/[\w-]+\.js(\.map)?$/.test(f)).sort(), ['README.md', 'dist', 'package.json']);
    assert.ok(!files.some((f) => f.startsWith('node_modules/@sandpit')), 'no @sandpit package is fetched: the SDK is bundled');
  });

  it('drives sandboxes from Node 20', async () => {
    const created = await sandpit(20, ['sandbox', 'create', '--json', '--metadata', 'suite=installed-cli']);
    assert.equal(created.code, 0, created.stderr);
    const id: string = JSON.parse(created.stdout).id;
    assert.deepEqual(await sandpit(20, ['exec', id, '--', 'echo hi; exit 3']), { code: 3, stdout: 'hi\n', stderr: '' });
    // The same installation from newer Nodes.
    for (const major of [22, 24] as const) {
      const listed = await sandpit(major, ['sandbox', 'list', '--json', '--metadata', 'suite=installed-cli']);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(
        JSON.parse(listed.stdout).map((s: { id: string }) => s.id),
        [id],
      );
    }
    assert.equal((await sandpit(20, ['sandbox', 'kill', id])).stdout, `killed ${id}\n`);
  });

  it('says that serve and the operator commands need a checkout', async () => {
    for (const args of [['serve'], ['team', 'create', 'someone'], ['cluster', 'status']]) {
      const r = await sandpit(20, args);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /needs a Sandpit checkout/);
    }
  });

  it('serves MCP over stdio from the installed package', async () => {
    const client = new Client({ name: 'sandpit-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: join(prefix, 'bin/sandpit'),
        args: ['mcp'],
        env: { PATH: `${nodeBin(20)}:${process.env.PATH}`, SANDPIT_API_URL: server.url, SANDPIT_API_KEY: server.key },
        stderr: 'pipe',
      }),
    );
    try {
      const created = (await client.callTool({ name: 'create_sandbox', arguments: {} })) as CallToolResult;
      const id: string = JSON.parse((created.content[0] as { text: string }).text).id;
      const ran = (await client.callTool({ name: 'run_command', arguments: { sandbox_id: id, command: 'echo from-mcp' } })) as CallToolResult;
      assert.deepEqual(JSON.parse((ran.content[0] as { text: string }).text), { exit_code: 0, stdout: 'from-mcp\n', stderr: '' });
      await client.callTool({ name: 'kill_sandbox', arguments: { sandbox_id: id } });
    } finally {
      await client.close();
    }
  });
});
