import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CLI, ServerProcess } from '../../server/test/helpers/server-process.ts';

let server: ServerProcess;
let client: Client;

before(async () => {
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor' });
  client = new Client({ name: 'sandpit-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env: { PATH: process.env.PATH ?? '', SANDPIT_API_URL: server.url, SANDPIT_API_KEY: server.key }, stderr: 'pipe' }),
  );
});
after(async () => {
  await client?.close();
  await server?.stop();
});

async function ok(name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = (result.content[0] as { text: string }).text;
  assert.ok(!result.isError, `${name} failed: ${text}`);
  return text;
}

it('gvisor: snapshot_sandbox, then fork_sandbox from the snapshot and straight from a sandbox', async () => {
  const sb = JSON.parse(await ok('create_sandbox', {}));
  await ok('write_file', { sandbox_id: sb.id, path: 'state.txt', content: 'before snapshot\n' });
  const snap = JSON.parse(await ok('snapshot_sandbox', { sandbox_id: sb.id, name: 'mcp-snap' }));
  assert.equal(snap.status, 'ready');
  await ok('write_file', { sandbox_id: sb.id, path: 'state.txt', content: 'after snapshot\n' });

  const fromSnapshot = JSON.parse(await ok('fork_sandbox', { snapshot_id: snap.id }));
  assert.equal(fromSnapshot.from_snapshot, snap.id);
  assert.equal(await ok('read_file', { sandbox_id: fromSnapshot.id, path: 'state.txt' }), 'before snapshot\n');

  const fromSandbox = JSON.parse(await ok('fork_sandbox', { sandbox_id: sb.id }));
  assert.notEqual(fromSandbox.from_snapshot, snap.id);
  assert.equal(await ok('read_file', { sandbox_id: fromSandbox.id, path: 'state.txt' }), 'after snapshot\n');
  assert.equal(await ok('read_file', { sandbox_id: sb.id, path: 'state.txt' }), 'after snapshot\n', 'the original keeps running');
});
