import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Api, ServerProcess } from './helpers/server-process.ts';

const bare = (id: string) => id.replace(/^sb-[a-z0-9]+-/, '');
let server: ServerProcess | undefined;
after(async () => {
  await server?.stop();
});

test('kill -9 the server: sandboxes keep running and are reconciled on restart, nothing leaks', async () => {
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'container' });
  const api = new Api(server.url, server.key);
  const mk = async () => (await api.post('/sandboxes', {})).body;
  const [running, paused, dies, halfDeleted] = [await mk(), await mk(), await mk(), await mk()];
  const exec = (sb: any, command: string) => api.post(`/sandboxes/${sb.id}/exec`, { command });
  await exec(running, "nohup sh -c 'i=0; while true; do i=$((i+1)); echo $i > /tmp/n.new && mv /tmp/n.new /tmp/n; sleep 0.05; done' >/dev/null 2>&1 &");
  await exec(paused, 'echo before > /home/user/state');
  assert.equal((await api.post(`/sandboxes/${paused.id}/pause`)).status, 200);

  await server.kill9();

  // While the server is down: one sandbox's init dies, and one delete is cut short after marking its row.
  const sandboxDir = (sb: any) => join(server!.dataDir, 'sandboxes', bare(sb.id));
  const initPid = Number(readFileSync(join(sandboxDir(dies), 'init.pid'), 'utf8'));
  process.kill(initPid, 'SIGKILL');
  const db = new BetterSqlite3(join(server.dataDir, 'sandpit.db'));
  db.prepare('update sandboxes set deleted_at = ? where id = ?').run(Date.now(), bare(halfDeleted.id));
  db.close();
  await new Promise((r) => setTimeout(r, 300));

  await server.launch();
  const byId = async (sb: any) => (await api.get(`/sandboxes/${sb.id}`)).body;
  assert.equal((await byId(running)).status, 'active');
  assert.equal((await byId(paused)).status, 'paused');
  assert.equal((await byId(dies)).status, 'failed');
  assert.equal((await api.get(`/sandboxes/${halfDeleted.id}`)).status, 404);
  assert.ok(!existsSync(sandboxDir(halfDeleted)), 'engine state of the half-deleted sandbox is destroyed');
  assert.ok(!existsSync(sandboxDir(dies)), 'a failed sandbox releases its engine state');

  const counting = await exec(running, 'a=$(cat /tmp/n); sleep 0.3; b=$(cat /tmp/n); [ "$b" -gt "$a" ] && echo counting');
  assert.equal(counting.body.stdout, 'counting\n', 'processes survived the server crash');
  const resumed = await api.post(`/sandboxes/${paused.id}/resume`);
  assert.equal(resumed.status, 200);
  assert.equal((await exec(paused, 'cat /home/user/state')).body.stdout, 'before\n');
  assert.equal((await exec(dies, 'true')).status, 409, 'a failed sandbox runs nothing');
  assert.equal((await api.post(`/sandboxes/${dies.id}/resume`)).status, 409);
  assert.equal((await api.del(`/sandboxes/${dies.id}`)).status, 204);

  const dataDir = server.dataDir;
  await server.stop();
  server = undefined;
  const mounts = readFileSync('/proc/mounts', 'utf8');
  assert.ok(!mounts.includes(dataDir), 'no mount under the data dir is left');
  for (const sb of [running, paused]) {
    assert.ok(!existsSync(`/sys/fs/cgroup/memory/sandpit/${bare(sb.id)}`), 'cgroup removed');
  }
});

test('a restart on another default driver keeps managing the sandboxes the first one runs', async () => {
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'container' });
  const api = new Api(server.url, server.key);
  const old = (await api.post('/sandboxes', {})).body;
  assert.equal(old.driver, 'container');
  await api.post(`/sandboxes/${old.id}/exec`, { command: 'echo kept > /home/user/f' });
  await server.kill9();
  server.env.SANDPIT_DRIVER = 'gvisor';
  await server.launch();
  assert.equal((await new Api(server.url).get('/info')).body.driver, 'gvisor');
  assert.equal((await api.get(`/sandboxes/${old.id}`)).body.status, 'active');
  assert.equal((await api.post(`/sandboxes/${old.id}/exec`, { command: 'cat /home/user/f' })).body.stdout, 'kept\n');
  assert.equal((await api.post(`/sandboxes/${old.id}/pause`)).body.status, 'paused');
  assert.equal((await api.post(`/sandboxes/${old.id}/resume`)).body.status, 'active');
  const fresh = (await api.post('/sandboxes', {})).body;
  assert.equal(fresh.driver, 'gvisor');
  assert.equal((await api.post(`/sandboxes/${fresh.id}/exec`, { command: 'echo new' })).body.stdout, 'new\n');
  assert.equal((await api.del(`/sandboxes/${old.id}`)).status, 204);
  assert.equal((await api.del(`/sandboxes/${fresh.id}`)).status, 204);
  await server.stop();
  server = undefined;
});

test('gvisor: after a restart, a pause as the first request to a running sandbox pauses it, or refuses what cannot be saved', async () => {
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor' });
  const api = new Api(server.url, server.key);
  const [plain, holding] = [(await api.post('/sandboxes', {})).body.id as string, (await api.post('/sandboxes', {})).body.id as string];
  await api.post(`/sandboxes/${plain}/exec`, { command: 'echo kept > /home/user/f' });
  // A process holding a deleted file: gVisor cannot save it, so the pause must refuse it (409), not fail.
  await api.post(`/sandboxes/${holding}/exec`, { command: "setsid -f sh -c 'exec 3>/tmp/held; rm /tmp/held; exec sleep 1000' >/dev/null 2>&1" });
  await server.kill9();
  await server.launch();
  // The first request each sandbox gets from the new server (its agent may not have reconnected yet;
  // process-descriptors-units.test.ts covers the read without one).
  const paused = await api.post(`/sandboxes/${plain}/pause`);
  assert.equal(paused.status, 200, JSON.stringify(paused.body));
  assert.equal(paused.body.status, 'paused');
  const refused = await api.post(`/sandboxes/${holding}/pause`);
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.match(refused.body.error.message, /deleted file/);
  assert.equal((await api.post(`/sandboxes/${plain}/resume`)).body.status, 'active');
  assert.equal((await api.post(`/sandboxes/${plain}/exec`, { command: 'cat /home/user/f' })).body.stdout, 'kept\n');
  assert.equal((await api.get(`/sandboxes/${holding}`)).body.status, 'active');
  for (const id of [plain, holding]) assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
  await server.stop();
  server = undefined;
});

test('gvisor: after a restart, the agents of running sandboxes reconnect before any request to them', async () => {
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'gvisor' });
  const api = new Api(server.url, server.key);
  const id = (await api.post('/sandboxes', {})).body.id as string;
  await server.kill9();
  await server.launch();
  // The server's end of the agent's connection: a socket of the server's at the sandbox's channel path, in the
  // network namespace of runsc's gofer (which dials host sockets for the sandbox), where the host's `ss` does not look.
  const channel = join(server.dataDir, 'gvisor', 'sandboxes', bare(id), 'run', 'host.sock');
  const runscRoot = join(server.dataDir, 'gvisor', readdirSync(join(server.dataDir, 'gvisor')).find((d) => d.startsWith('runsc-0'))!);
  const gofer = JSON.parse(readFileSync(join(runscRoot, `${bare(id)}_sandbox:${bare(id)}.state`), 'utf8')).goferPid as number;
  const connected = () =>
    execFileSync('nsenter', [`--net=/proc/${gofer}/ns/net`, 'ss', '-x', '-n', '-p'], { encoding: 'utf8' })
      .split('\n')
      .some((l) => l.includes(` ${channel} `) && l.includes(`pid=${server!.pid},`));
  const deadline = Date.now() + 15_000;
  while (!connected() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.ok(connected(), 'the agent reconnected with no request to its sandbox');
  assert.equal((await api.post(`/sandboxes/${id}/exec`, { command: 'echo ok' })).body.stdout, 'ok\n');
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
  await server.stop();
  server = undefined;
});
