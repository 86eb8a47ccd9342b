import assert from 'node:assert/strict';
import { test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { Api, CLI, sandboxFixture } from './helpers/server-process.ts';

const fx = sandboxFixture({ SANDPIT_DRIVER: 'container', SANDPIT_METRICS_INTERVAL_MS: '300' });

const admin = () => new Api(fx.server.url, fx.server.key);
/** A client that signs in like the console: no X-API-Key, only the session cookie. */
async function cookieReq(method: string, path: string, cookie: string, headers: Record<string, string> = {}) {
  const res = await fetch(fx.server.url + path, { method, headers: { cookie, ...headers } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function signIn(key: string) {
  const res = await fetch(`${fx.server.url}/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: key }) });
  return { status: res.status, setCookie: res.headers.get('set-cookie'), body: await res.json() };
}

test('a wrong key gets no session', async () => {
  const res = await signIn('sp_not_a_key');
  assert.equal(res.status, 401);
  assert.equal(res.body.error.code, 'unauthorized');
  assert.equal(res.setCookie, null);
});

test('the session cookie acts with the key, mutations need the console header, sign-out ends it', async () => {
  const res = await signIn(fx.server.key);
  assert.equal(res.status, 200);
  assert.ok(res.body.permissions.includes('sandboxes:write'));
  const setCookie = res.setCookie ?? '';
  assert.match(setCookie, /HttpOnly/i);
  assert.match(setCookie, /SameSite=Strict/i);
  assert.doesNotMatch(setCookie, new RegExp(fx.server.key));
  const cookie = setCookie.split(';')[0]!;

  const me = await cookieReq('GET', '/me', cookie);
  assert.equal(me.status, 200);
  assert.equal(me.body.key_id, res.body.key_id);

  const path = `/sandboxes/${fx.sb.id}/pause`;
  const noHeader = await cookieReq('POST', path, cookie);
  assert.equal(noHeader.status, 403);
  const crossSite = await cookieReq('POST', path, cookie, { 'x-sandpit-console': '1', origin: 'http://evil.example' });
  assert.equal(crossSite.status, 403);
  assert.equal((await admin().get(`/sandboxes/${fx.sb.id}`)).body.status, 'active');
  const paused = await cookieReq('POST', path, cookie, { 'x-sandpit-console': '1', origin: fx.server.url });
  assert.equal(paused.status, 200);
  assert.equal(paused.body.status, 'paused');
  const resumed = await cookieReq('POST', `/sandboxes/${fx.sb.id}/resume`, cookie, { 'x-sandpit-console': '1' });
  assert.equal(resumed.status, 200);

  const out = await fetch(`${fx.server.url}/session`, { method: 'DELETE', headers: { cookie } });
  assert.equal(out.status, 204);
  assert.equal((await cookieReq('GET', '/me', cookie)).status, 401);
});

test('a session ends with its key', async () => {
  const made = await admin().post('/api-keys', { name: 'short-lived', permissions: ['sandboxes:read'] });
  assert.equal(made.status, 201);
  const cookie = (await signIn(made.body.key)).setCookie!.split(';')[0]!;
  assert.equal((await cookieReq('GET', '/sandboxes', cookie)).status, 200);
  assert.equal((await cookieReq('GET', '/billing/summary', cookie)).status, 403);
  assert.equal((await admin().del(`/api-keys/${made.body.id}`)).status, 204);
  assert.equal((await cookieReq('GET', '/sandboxes', cookie)).status, 401);
});

test('metrics: CPU, memory, disk and network points of an active sandbox', async () => {
  // The CPU work lasts a few samples: under load a sample can come late, and a point after a gap has no rate.
  const run = await admin().post(`/sandboxes/${fx.sb.id}/exec`, { command: "(timeout 3 sh -c 'while :; do :; done' &); getent hosts sandpit-test.invalid; true" });
  assert.equal(run.status, 200);
  let body: any;
  const end = Date.now() + 20_000;
  for (;;) {
    body = (await admin().get(`/sandboxes/${fx.sb.id}/metrics`)).body;
    const full = body.points.filter((p: any) => p.cpu_percent !== null && p.net_tx_rate !== null);
    if (full.length >= 3 && body.points.some((p: any) => p.cpu_percent > 0)) break;
    if (Date.now() > end) assert.fail(`too few points: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
  assert.equal(body.interval_ms, 300);
  assert.equal(body.resources.vcpu_count > 0, true);
  const last = body.points.at(-1);
  assert.ok(last.memory_bytes > 0);
  assert.ok(last.disk_bytes >= 0);
  assert.ok(last.net_tx_bytes > 0, 'the DNS query left through the veth');
  assert.ok(body.points.some((p: any) => p.cpu_percent > 0));
  const since = (await admin().get(`/sandboxes/${fx.sb.id}/metrics?since=${encodeURIComponent(last.at)}`)).body;
  assert.ok(since.points.length >= 1 && since.points.every((p: any) => p.at >= last.at));
  assert.equal((await admin().get(`/sandboxes/${fx.sb.id}/metrics?since=yesterday`)).status, 400);
  assert.equal((await admin().get('/sandboxes/sb-local-00000000-0000-4000-8000-000000000000/metrics')).status, 404);
});

test('events: lifecycle with reasons, oldest first, pageable', async () => {
  const res = await admin().get(`/sandboxes/${fx.sb.id}/events`);
  assert.equal(res.status, 200);
  const types = res.body.events.map((e: any) => e.type);
  assert.deepEqual(types.slice(0, 3), ['created', 'paused', 'resumed']);
  assert.equal(res.body.events[1].reason, 'paused by request');
  const after = await admin().get(`/sandboxes/${fx.sb.id}/events?after=${res.body.events[0].seq}&limit=1`);
  assert.deepEqual(
    after.body.events.map((e: any) => e.type),
    ['paused'],
  );
  const other = await fetch(`${fx.server.url}/sandboxes/${fx.sb.id}/events`, { headers: { 'x-api-key': 'sp_wrong' } });
  assert.equal(other.status, 401);
});

test('the SDK and the CLI read metrics and events', async () => {
  const { SandpitClient } = await import('../../sdk/src/index.ts');
  const client = new SandpitClient({ apiUrl: fx.server.url, apiKey: fx.server.key });
  const events = await client.sandboxes.events(fx.sb.id);
  assert.equal(events[0]?.type, 'created');
  assert.ok((await client.sandboxes.metrics(fx.sb.id)).points.length > 0);
  const run = (...args: string[]) => execFileSync(process.execPath, [CLI, ...args], { env: { ...process.env, SANDPIT_API_URL: fx.server.url, SANDPIT_API_KEY: fx.server.key }, encoding: 'utf8' });
  assert.match(run('sandbox', 'events', fx.sb.id), /created\s+created by request/);
  const metrics = JSON.parse(run('sandbox', 'metrics', fx.sb.id, '--last', '2', '--json'));
  assert.equal(metrics.points.length, 2);
});

test('events: an auto-pause says so', async () => {
  const made = await admin().post('/sandboxes', { auto_pause_seconds: 1 });
  assert.equal(made.status, 201);
  const end = Date.now() + 20_000;
  let events: any[] = [];
  while (!events.some((e) => e.type === 'auto_paused')) {
    if (Date.now() > end) assert.fail(`no auto-pause event: ${JSON.stringify(events)}`);
    await new Promise((r) => setTimeout(r, 250));
    events = (await admin().get(`/sandboxes/${made.body.id}/events`)).body.events;
  }
  assert.equal(events.find((e) => e.type === 'auto_paused').reason, 'paused by auto-pause after its idle timeout');
  assert.equal((await admin().del(`/sandboxes/${made.body.id}`)).status, 204);
});
