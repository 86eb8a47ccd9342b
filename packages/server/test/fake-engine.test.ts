import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ManualClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { CaptureEndedSandbox } from '../src/runtime/driver.ts';
import { type Platform, startPlatform } from '../src/server.ts';
import { baseRecipe, recipeHash } from '../src/templates/base-recipe.ts';
import { MemoryDriver } from './fakes/memory-driver.ts';
import { Api } from './helpers/server-process.ts';

// The rules above the engine (lifecycle, caps, timers, metering, routes) on an engine kept in memory.
const S = 1000;
const KEY = 'sp_fake_engine_test_key_0123456789';
const engine = new MemoryDriver();
const clock = new ManualClock(Date.UTC(2031, 0, 10, 12, 0, 0));
let dir: string;
let platform: Platform;
let api: Api;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandpit-fake-engine-'));
  // platform/base is only a path to a fake engine: an empty root where the cache would have it.
  await mkdir(join(dir, 'images', 'templates', 'platform-base', recipeHash(baseRecipe()), 'rootfs'), { recursive: true });
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SANDPIT_PUBLIC_HOST: '127.0.0.1',
    SANDPIT_DATA_DIR: join(dir, 'data'),
    SANDPIT_IMAGE_DIR: join(dir, 'images'),
    SANDPIT_BOOTSTRAP_API_KEY: KEY,
    SANDPIT_LOG_LEVEL: 'silent',
    SANDPIT_RATE_LIMIT: '0',
    SANDPIT_MAX_ACTIVE_SANDBOXES: '2',
    SANDPIT_E2B_PORT: '0',
    SANDPIT_SSH_PORT: '0',
    SANDPIT_WARM_POOL: '0',
  });
  // Timers run when a test says so.
  platform = await startPlatform(config, { clock, engine, timerIntervalMs: 3_600_000 });
  api = new Api(platform.url, KEY);
});

after(async () => {
  await platform?.close();
  await rm(dir, { recursive: true, force: true });
});

const bare = (id: string) => id.replace(/^sb-[a-z0-9]+-/, '');

async function create(body: object = {}): Promise<string> {
  const res = await api.post('/sandboxes', body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id;
}

test('create, pause, resume, delete: the store and the engine agree; transitions from the wrong state are 409', async () => {
  const id = await create();
  assert.equal(engine.sandboxes.get(bare(id))?.state, 'running');
  assert.equal((await api.post(`/sandboxes/${id}/pause`)).body.status, 'paused');
  assert.equal(engine.sandboxes.get(bare(id))?.state, 'paused');
  const again = await api.post(`/sandboxes/${id}/pause`);
  assert.equal(again.status, 409);
  assert.equal(again.body.error.code, 'conflict');
  assert.equal((await api.post(`/sandboxes/${id}/resume`)).body.status, 'active');
  assert.equal(engine.sandboxes.get(bare(id))?.state, 'running');
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
  assert.equal(engine.sandboxes.has(bare(id)), false);
  assert.equal((await api.get(`/sandboxes/${id}`)).status, 404);
});

test('the active cap counts running sandboxes; a paused one frees its place', async () => {
  const a = await create();
  const b = await create();
  const third = await api.post('/sandboxes', {});
  assert.equal(third.status, 429);
  assert.equal(third.body.error.code, 'too_many_sandboxes');
  await api.post(`/sandboxes/${a}/pause`);
  const c = await create();
  const resumed = await api.post(`/sandboxes/${a}/resume`);
  assert.equal(resumed.status, 429, 'resuming past the cap is refused too');
  for (const id of [a, b, c]) await api.del(`/sandboxes/${id}`);
});

test('auto-pause and auto-delete fire on the clock, not before', async () => {
  const id = await create({ auto_pause_seconds: 60, auto_delete_seconds: 120 });
  clock.advance(59 * S);
  await platform.sandboxes.runTimers();
  assert.equal((await api.get(`/sandboxes/${id}`)).body.status, 'active');
  clock.advance(2 * S);
  await platform.sandboxes.runTimers();
  const paused = (await api.get(`/sandboxes/${id}`)).body;
  assert.equal(paused.status, 'paused');
  assert.ok(paused.auto_delete_at, 'a paused sandbox shows when it will be deleted');
  clock.advance(121 * S);
  await platform.sandboxes.runTimers();
  assert.equal((await api.get(`/sandboxes/${id}`)).status, 404);
  assert.equal(engine.sandboxes.has(bare(id)), false);
});

test('a pause that takes the sandbox down leaves it failed, never paused; one the engine survives stays active', async () => {
  const survived = await create();
  engine.failNext('pause', new Error('checkpoint refused'), 'running');
  assert.equal((await api.post(`/sandboxes/${survived}/pause`)).status, 500);
  assert.equal((await api.get(`/sandboxes/${survived}`)).body.status, 'active');

  const lost = await create();
  engine.failNext('pause', new Error('sandbox died'), 'missing');
  const res = await api.post(`/sandboxes/${lost}/pause`);
  assert.equal(res.status, 500);
  assert.equal(res.body.error.code, 'internal');
  assert.equal((await api.get(`/sandboxes/${lost}`)).body.status, 'failed');
  for (const id of [survived, lost]) await api.del(`/sandboxes/${id}`);
});

test('a pause the engine says ended the sandbox leaves it failed, though its process still looks running', async () => {
  const id = await create();
  engine.failNext('pause', new CaptureEndedSandbox('checkpoint exited 128 (runsc ended the sandbox)'), 'running');
  const res = await api.post(`/sandboxes/${id}/pause`);
  assert.equal(res.status, 500);
  assert.match(res.body.error.message, /took the sandbox down/);
  const after = (await api.get(`/sandboxes/${id}`)).body;
  assert.equal(after.status, 'failed');
  assert.equal(after.failure_reason, 'pause_failed');
  assert.equal(engine.sandboxes.has(bare(id)), false, 'its remains are removed');
  await api.del(`/sandboxes/${id}`);
});

test('metering counts active time only', async () => {
  const team = (await api.get('/me')).body.team_id;
  const before = (await api.get(`/teams/${team}/billing/usage`)).body.vcpu_seconds;
  const id = await create();
  clock.advance(90 * S);
  await api.post(`/sandboxes/${id}/pause`);
  clock.advance(3600 * S);
  await api.post(`/sandboxes/${id}/resume`);
  clock.advance(30 * S);
  await api.del(`/sandboxes/${id}`);
  clock.advance(600 * S);
  await platform.billing.runJob();
  const usage = (await api.get(`/teams/${team}/billing/usage`)).body;
  assert.equal(usage.vcpu_seconds - before, 120, JSON.stringify(usage));
});

test('routes: the error envelope for a missing key, a bad filter, an unknown sandbox; commands without an agent are 503', async () => {
  const anon = await new Api(platform.url).get('/sandboxes');
  assert.equal(anon.status, 401);
  assert.equal(anon.body.error.code, 'unauthorized');
  const bad = await api.get('/sandboxes?status=sleeping');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'bad_request');
  const missing = await api.get('/sandboxes/00000000-0000-4000-8000-000000000000');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, 'not_found');
  const id = await create();
  const exec = await api.post(`/sandboxes/${id}/exec`, { command: 'true' });
  assert.equal(exec.status, 503);
  assert.equal(exec.body.error.code, 'unavailable');
  await api.del(`/sandboxes/${id}`);
});

test('a start that fails partway (its E2B port is taken) closes what it opened, so the process can exit', async () => {
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  const servers = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
  const before = servers();
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SANDPIT_DATA_DIR: join(dir, 'data-2'),
    SANDPIT_IMAGE_DIR: join(dir, 'images'),
    SANDPIT_LOG_LEVEL: 'silent',
    SANDPIT_E2B_PORT: String((taken.address() as { port: number }).port),
    SANDPIT_SSH_PORT: '0',
  });
  await assert.rejects(startPlatform(config, { clock, engine: new MemoryDriver(), timerIntervalMs: 3_600_000 }), /is already in use/);
  // Closed handles leave the list a few ticks later.
  for (let i = 0; i < 50 && servers() !== before; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(servers(), before, 'the API port is closed again');
  await new Promise((r) => taken.close(r));
});
