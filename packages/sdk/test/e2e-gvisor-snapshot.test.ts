import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ServerProcess } from '../../server/test/helpers/server-process.ts';
import { Sandbox, SandpitClient } from '../src/index.ts';

let server: ServerProcess;
let client: SandpitClient;

before(async () => {
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor' });
  client = new SandpitClient({ apiUrl: server.url, apiKey: server.key });
});
after(async () => {
  await server?.stop();
});

it('gvisor: snapshot a sandbox, fork it, rename and delete the snapshot', async () => {
  const sb = await Sandbox.create({ client });
  await sb.files.write('state.txt', 'before snapshot\n');
  const snap = await sb.snapshot({ name: 'sdk-snap', idempotencyKey: 'sdk-1' });
  assert.equal(snap.status, 'ready');
  assert.equal((await sb.snapshot({ idempotencyKey: 'sdk-1' })).id, snap.id, 'the same key returns the same snapshot');
  const fork = await Sandbox.create({ client, from_snapshot: snap.id });
  assert.equal(await fork.files.read('state.txt', { format: 'text' }), 'before snapshot\n');
  assert.equal((await client.snapshots.rename(snap.id, 'renamed')).name, 'renamed');
  const listed = [];
  for await (const page of client.snapshots.list({ sandboxId: sb.id })) listed.push(...page.map((s) => s.id));
  assert.deepEqual(listed, [snap.id]);
  await fork.kill();
  assert.equal(await client.snapshots.delete(snap.id), true);
  assert.equal(await client.snapshots.delete(snap.id), false);
});
