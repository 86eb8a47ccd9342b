import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Api, parseSse, sandboxFixture } from './helpers/server-process.ts';

const fx = sandboxFixture();

const api = () => new Api(fx.server.url);
const get = (path: string) => api().get(path, fx.dp);
const post = (path: string, body: unknown) => api().post(path, body, fx.dp);

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('start, list, read output, stream, stdin, exit status', async () => {
  const started = await post('/processes', { command: 'echo start; echo err >&2; read line; echo "got $line as $(id -un) in $(pwd)"; exit 4' });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  const p = started.body;
  assert.equal(p.running, true);
  assert.deepEqual([p.command, p.args, p.working_dir], ['/bin/sh', ['-c', 'echo start; echo err >&2; read line; echo "got $line as $(id -un) in $(pwd)"; exit 4'], '/home/user']);
  const listed = await get('/processes');
  assert.ok(listed.body.processes.some((x: any) => x.id === p.id && x.running));
  const early = await until(
    () => get(`/processes/${p.id}/output`),
    // stdout and stderr are two pipes: one may be read before the other.
    (r) => r.body.stdout === 'start\n' && r.body.stderr === 'err\n',
  );
  assert.deepEqual([early.body.stdout, early.body.stderr, early.body.running], ['start\n', 'err\n', true]);
  // The stream replays what was kept, then follows live.
  const stream = fetch(`${fx.server.url}/processes/${p.id}/stream`, { headers: fx.dp }).then((r) => r.text());
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await post(`/processes/${p.id}/stdin`, { data: 'aGVsbG8K', encoding: 'base64' })).status, 204);
  const { events } = parseSse(await stream);
  assert.equal(events.map((e) => e.stdout ?? '').join(''), 'start\ngot hello as user in /home/user\n');
  assert.equal(events.map((e) => e.stderr ?? '').join(''), 'err\n');
  assert.deepEqual([events.at(-1).finished, events.at(-1).exit_code], [true, 4]);
  const done = await get(`/processes/${p.id}`);
  assert.deepEqual([done.body.running, done.body.exit_code], [false, 4]);
  // A stream of an exited process replays and finishes at once; pid works as the id too.
  const again = parseSse(await (await fetch(`${fx.server.url}/processes/${p.pid}/stream`, { headers: fx.dp })).text());
  assert.equal(again.events.at(-1).exit_code, 4);
  assert.equal((await post(`/processes/${p.id}/stdin`, { data: 'x' })).status, 409);
  assert.equal((await api().req('DELETE', `/processes/${p.id}`, undefined, fx.dp)).status, 204);
  assert.equal((await get(`/processes/${p.id}`)).status, 404);
});

test('signals, args without a shell, env, spawn errors', async () => {
  const p = (await post('/processes', { command: 'sleep', args: ['300'] })).body;
  assert.equal(p.command, 'sleep');
  assert.equal((await post(`/processes/${p.id}/signal`, { signal: 'TERM' })).status, 204);
  const ended = await until(
    () => get(`/processes/${p.id}`),
    (r) => !r.body.running,
  );
  assert.deepEqual([ended.body.exit_code, ended.body.signal], [143, 15]);
  const env = (await post('/processes', { command: 'echo $GREETING', env: { GREETING: 'hi' }, working_dir: '/tmp' })).body;
  const out = await until(
    () => get(`/processes/${env.id}/output`),
    (r) => !r.body.running,
  );
  assert.equal(out.body.stdout, 'hi\n');
  const missing = await post('/processes', { command: '/no/such/binary', args: [] });
  assert.equal(missing.status, 400);
  assert.match(missing.body.error.message, /No such file/);
  assert.equal((await post('/processes', { command: 'true', working_dir: '/no/such/dir' })).status, 400);
  assert.equal((await post(`/processes/${env.id}/signal`, { signal: 'SIGNOPE' })).status, 400);
  assert.equal((await get('/processes/nope')).status, 404);
  assert.equal((await post('/processes', {})).status, 400);
});

test('a process that never reads stdin gets 409 instead of stalling the sandbox', async () => {
  const p = (await post('/processes', { command: 'sleep 300' })).body;
  const chunk = 'x'.repeat(1024 * 1024);
  let status = 0;
  for (let i = 0; i < 12 && status !== 409; i++) status = (await post(`/processes/${p.id}/stdin`, { data: chunk })).status;
  assert.equal(status, 409);
  // Everything else on the sandbox still works.
  const other = (await post('/processes', { command: 'echo fine' })).body;
  const out = await until(
    () => get(`/processes/${other.id}/output`),
    (r) => !r.body.running,
  );
  assert.equal(out.body.stdout, 'fine\n');
  assert.equal((await api().req('DELETE', `/processes/${p.id}`, undefined, fx.dp)).status, 204);
});

test('processes survive pause/resume and a server restart', async () => {
  const p = (await post('/processes', { command: 'i=0; while :; do echo tick $i; i=$((i+1)); sleep 0.1; done' })).body;
  await until(
    () => get(`/processes/${p.id}/output`),
    (r) => r.body.stdout.includes('tick 2'),
  );
  const control = new Api(fx.server.url, fx.server.key);
  assert.equal((await control.post(`/sandboxes/${fx.sb.id}/pause`)).status, 200);
  assert.equal((await control.post(`/sandboxes/${fx.sb.id}/resume`)).status, 200);
  const after = await until(
    () => get(`/processes/${p.id}`),
    (r) => r.status === 200,
  );
  assert.equal(after.body.running, true);

  await fx.server.kill9();
  await fx.server.launch();
  const found = await until(
    () => get(`/processes/${p.id}`),
    (r) => r.status === 200,
  );
  assert.equal(found.status, 200, JSON.stringify(found.body));
  assert.equal(found.body.running, true);
  assert.equal(found.body.pid, p.pid);
  const out = await until(
    () => get(`/processes/${p.id}/output`),
    (r) => /tick \d+\n$/.test(r.body.stdout),
  );
  assert.match(out.body.stdout, /tick \d+\n/);
  assert.equal((await post(`/processes/${p.id}/signal`, { signal: 'SIGKILL' })).status, 204);
  const ended = await until(
    () => get(`/processes/${p.id}`),
    (r) => !r.body.running,
  );
  assert.equal(ended.body.exit_code, 137);
});
