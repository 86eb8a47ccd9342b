import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CLI, ServerProcess } from '../../server/test/helpers/server-process.ts';

const TOOLS = [
  'create_sandbox',
  'fork_sandbox',
  'get_preview_url',
  'kill_sandbox',
  'list_files',
  'list_sandboxes',
  'pause_sandbox',
  'read_file',
  'resume_sandbox',
  'run_command',
  'snapshot_sandbox',
  'write_file',
];

const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;
const json = (result: unknown) => JSON.parse(text(result));

async function call(client: Client, name: string, args: Record<string, unknown>, onprogress?: (p: { message?: string }) => void) {
  return (await client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress } : {})) as CallToolResult;
}

/** A tool call that must succeed; its JSON answer. */
async function ok(client: Client, name: string, args: Record<string, unknown>) {
  const result = await call(client, name, args);
  assert.ok(!result.isError, `${name} failed: ${text(result)}`);
  return json(result);
}

/** The same walk over either transport: tools, streamed command output, files, resources, errors; snapshots and forks once. */
async function tour(client: Client, withForks: boolean) {
  const tools = (await client.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(tools, TOOLS);

  const sb = await ok(client, 'create_sandbox', { name: 'mcp-tour', metadata: { suite: 'mcp' } });
  assert.equal(sb.status, 'active');
  try {
    const listed = await ok(client, 'list_sandboxes', { status: 'active' });
    assert.ok(listed.sandboxes.some((s: { id: string }) => s.id === sb.id));

    const progress: string[] = [];
    // The last sleep: the MCP client SDK handles a notification a tick after a response read with it, and would drop it.
    const ran = await call(client, 'run_command', { sandbox_id: sb.id, command: 'for i in 1 2 3; do echo line$i; sleep 0.2; done; echo oops >&2; sleep 0.2; exit 4' }, (p) =>
      progress.push(p.message ?? ''),
    );
    assert.deepEqual(json(ran), { exit_code: 4, stdout: 'line1\nline2\nline3\n', stderr: 'oops\n' });
    assert.equal(progress.join(''), 'line1\nline2\nline3\noops\n', 'output streamed as progress while the command ran');
    assert.ok(progress.length >= 3);

    const written = await ok(client, 'write_file', { sandbox_id: sb.id, path: 'work/hello.txt', content: 'hello mcp\n' });
    assert.equal(written.size, 10);
    assert.equal(text(await call(client, 'read_file', { sandbox_id: sb.id, path: '/home/user/work/hello.txt' })), 'hello mcp\n');
    await ok(client, 'write_file', { sandbox_id: sb.id, path: 'blob.bin', content: Buffer.from([0xff, 0, 1]).toString('base64'), encoding: 'base64' });
    const blob = (await call(client, 'read_file', { sandbox_id: sb.id, path: 'blob.bin' })).content[0] as { type: string; resource: { blob: string } };
    assert.equal(blob.type, 'resource');
    assert.equal(blob.resource.blob, Buffer.from([0xff, 0, 1]).toString('base64'));
    const dir = await ok(client, 'list_files', { sandbox_id: sb.id, path: 'work' });
    assert.deepEqual(
      dir.entries.map((e: { name: string }) => e.name),
      ['hello.txt'],
    );

    const uri = `sandpit://sandboxes/${sb.id}/files/home/user/blob.bin`;
    assert.ok(
      (await client.listResources()).resources.some((r) => r.uri === uri),
      'home directory files are listed as resources',
    );
    const viaResource = await client.readResource({ uri: `sandpit://sandboxes/${sb.id}/files/home/user/work/hello.txt` });
    assert.deepEqual(viaResource.contents, [{ uri: `sandpit://sandboxes/${sb.id}/files/home/user/work/hello.txt`, text: 'hello mcp\n' }]);

    const preview = await ok(client, 'get_preview_url', { sandbox_id: sb.id, port: 8080 });
    assert.match(preview.url, new RegExp(`8080-.*${sb.id.slice(-12)}`));
    assert.deepEqual(await ok(client, 'get_preview_url', { sandbox_id: sb.id, port: 8080 }), preview, 'asking again returns the same URL');

    assert.equal((await ok(client, 'pause_sandbox', { sandbox_id: sb.id })).status, 'paused');
    assert.equal((await ok(client, 'resume_sandbox', { sandbox_id: sb.id })).status, 'active');

    // Clear errors: bad input, an unknown sandbox, arguments that contradict each other.
    const bad = await call(client, 'run_command', { sandbox_id: sb.id });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /Input validation error.*command/s);
    const missing = await call(client, 'read_file', { sandbox_id: '00000000-0000-4000-8000-000000000000', path: 'x' });
    assert.equal(missing.isError, true);
    assert.match(text(missing), /^not_found \(HTTP 404\): /);
    const neither = await call(client, 'fork_sandbox', {});
    assert.equal(neither.isError, true);
    assert.match(text(neither), /exactly one of snapshot_id and sandbox_id/);

    if (withForks) {
      await ok(client, 'write_file', { sandbox_id: sb.id, path: 'state.txt', content: 'before snapshot\n' });
      const snap = await ok(client, 'snapshot_sandbox', { sandbox_id: sb.id, name: 'mcp-snap' });
      assert.equal(snap.status, 'ready');
      await ok(client, 'write_file', { sandbox_id: sb.id, path: 'state.txt', content: 'after snapshot\n' });
      const fromSnapshot = await ok(client, 'fork_sandbox', { snapshot_id: snap.id });
      assert.equal(fromSnapshot.from_snapshot, snap.id);
      assert.equal(text(await call(client, 'read_file', { sandbox_id: fromSnapshot.id, path: 'state.txt' })), 'before snapshot\n');
      const fromSandbox = await ok(client, 'fork_sandbox', { sandbox_id: sb.id });
      assert.notEqual(fromSandbox.from_snapshot, snap.id);
      assert.equal(text(await call(client, 'read_file', { sandbox_id: fromSandbox.id, path: 'state.txt' })), 'after snapshot\n');
      assert.equal(text(await call(client, 'read_file', { sandbox_id: sb.id, path: 'state.txt' })), 'after snapshot\n', 'the original keeps running');
      for (const fork of [fromSnapshot, fromSandbox]) await ok(client, 'kill_sandbox', { sandbox_id: fork.id });
    }
  } finally {
    assert.deepEqual(await ok(client, 'kill_sandbox', { sandbox_id: sb.id }), { sandbox_id: sb.id, killed: true });
  }
}

describe('sandpit mcp, with the MCP SDK client', () => {
  let server: ServerProcess;

  before(async () => {
    // gVisor, the driver that can snapshot, so fork_sandbox is proven too.
    server = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor' });
  });
  after(async () => {
    await server?.stop();
  });

  it('over stdio', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp'],
      env: { PATH: process.env.PATH ?? '', SANDPIT_API_URL: server.url, SANDPIT_API_KEY: server.key },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'sandpit-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      await tour(client, true);
    } finally {
      await client.close();
    }
  });

  it('over Streamable HTTP, with the API key from the request', async () => {
    // No key in the server's environment: each request brings its own.
    const { child, url } = await startHttp({ SANDPIT_API_URL: server.url });
    try {
      const keyless = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
      assert.equal(keyless.status, 401);
      const client = new Client({ name: 'sandpit-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${server.key}` } } }));
      try {
        await tour(client, false);
      } finally {
        await client.close();
      }
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  });
});

/** `sandpit mcp --http` on a free port; resolves with its URL once it listens. */
function startHttp(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'mcp', '--http', '--port', '0'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /on (http:\/\/\S+)/.exec(stderr);
      if (m?.[1]) resolve({ child, url: m[1] });
    });
    child.once('exit', (code) => reject(new Error(`sandpit mcp --http exited (${code}):\n${stderr}`)));
  });
}
