import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { verify } from '../src/services/webhooks/signature.ts';
import { SnapshotStore } from '../src/store/snapshots.ts';
import { FakePlatform } from './helpers/fake-platform.ts';
import type { Api } from './helpers/server-process.ts';
import { type Answer, Receiver, until } from './helpers/webhook-receiver.ts';

// Webhooks on the real routes, store and outbox, on an engine kept in memory; receivers on 127.0.0.1.
const SECRET = 'whsec_test_secret_0123456789';
const receivers: Receiver[] = [];
let f: FakePlatform;
let api: Api;
let teamId: string;
// Each test's receivers; the platform allows every port the suite will use.
let good: Receiver;
let flaky: Receiver;
let hang: Receiver;
let closer: Receiver;
let redirect: Receiver;
let down: Receiver;
let downPort: number;
let flakyAnswer: (n: number) => Answer = () => ({ status: 200 });

before(async () => {
  good = await Receiver.start();
  flaky = await Receiver.start((n) => flakyAnswer(n));
  hang = await Receiver.start(() => 'hang');
  closer = await Receiver.start(() => 'close');
  redirect = await Receiver.start(() => ({ status: 302, headers: { location: good.url } }));
  // A receiver that is not up yet: its port is known, nothing listens there until the restart test.
  down = await Receiver.start();
  downPort = down.port;
  await down.close();
  receivers.push(good, flaky, hang, closer, redirect);
  const allow = [...receivers.map((r) => r.hostPort), `127.0.0.1:${downPort}`].join(',');
  f = await FakePlatform.start({ env: { SANDPIT_WEBHOOK_ALLOW_HOSTS: allow }, options: { webhookTimeoutMs: 1500 } });
  api = f.api();
  teamId = (await api.get('/me')).body.team_id;
});

after(async () => {
  await f?.destroy();
  for (const r of receivers) await r.close();
});

async function hook(url: string, events: string[] = ['*']): Promise<string> {
  const res = await api.post('/webhooks', { url, events, secret: SECRET });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id;
}

const deliveries = async (id: string) => (await api.get(`/webhooks/${id}/deliveries`)).body.deliveries as any[];

/** A snapshot of the sandbox made ready at `at`, written as the snapshot service writes it (the memory engine takes none). */
async function snapshotReady(id: string, sandboxId: string, at: number, resource: Record<string, unknown>): Promise<void> {
  const snapshots = new SnapshotStore(f.p.db);
  const row = {
    id,
    teamId,
    sandboxId,
    templateId: null,
    kind: 'mem+fs' as const,
    status: 'creating' as const,
    name: `snap-${id.slice(-4)}`,
    sizeBytes: 0,
    resources: { vcpu_count: 1, memory_mib: 512, disk_mib: 1024 },
    env: {},
    idempotencyKey: null,
    createdAt: at,
    readyAt: null,
    updatedAt: at,
    deletedAt: null,
  };
  await snapshots.insert(row);
  await snapshots.save({ ...row, status: 'ready', readyAt: at }, { type: 'snapshot.ready', at, orderingKey: `sandbox:${sandboxId}`, resource });
}

test('URLs pointing at loopback, link-local, private or platform addresses are refused with 400, unless allowed; bad events too', async () => {
  for (const url of [
    'http://127.0.0.1:9/x',
    'http://localhost:8080/',
    'http://169.254.169.254/latest/meta-data',
    'http://10.1.2.3/',
    'http://172.20.0.1/',
    'http://192.168.1.1/',
    'http://100.96.0.7/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[fe80::1]/',
    'http://0.0.0.0/',
    `http://127.0.0.1:${good.port + 1 === flaky.port ? good.port + 2 : good.port + 1}/`,
    'ftp://example.com/',
    'not a url',
    'http://user:pass@127.0.0.1/',
  ]) {
    const res = await api.post('/webhooks', { url, events: ['*'] });
    assert.equal(res.status, 400, `${url}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.code, 'bad_request');
  }
  const unknown = await api.post('/webhooks', { url: good.url, events: ['sandbox.exploded'] });
  assert.equal(unknown.status, 400);
  assert.match(unknown.body.error.message, /unknown event type/);
  // A generated secret is answered once and never again.
  const made = await api.post('/webhooks', { url: good.url, events: ['sandbox.created'], active: false });
  assert.equal(made.status, 201);
  assert.match(made.body.secret, /^whsec_/);
  const got = await api.get(`/webhooks/${made.body.id}`);
  assert.equal(got.body.secret, undefined);
  assert.deepEqual(got.body.events, ['sandbox.created']);
  assert.equal((await api.patch(`/webhooks/${made.body.id}`, { url: 'http://127.0.0.2/' })).status, 400);
  assert.equal((await api.del(`/webhooks/${made.body.id}`)).status, 204);
  assert.equal((await api.get(`/webhooks/${made.body.id}`)).status, 404);
});

test('lifecycle events arrive signed, in order, each with the sandbox as the API showed it then', async () => {
  const id = await hook(good.url, ['sandbox.created', 'sandbox.paused', 'sandbox.resumed', 'sandbox.deleted']);
  good.received.length = 0;
  const sb = (await api.post('/sandboxes', { metadata: { run: 'w1' } })).body.id;
  await api.post(`/sandboxes/${sb}/pause`);
  await api.post(`/sandboxes/${sb}/resume`);
  await api.patch(`/sandboxes/${sb}`, { name: 'renamed' });
  await api.del(`/sandboxes/${sb}`);
  await until(() => good.received.length >= 4, 15_000, 'four deliveries');
  await new Promise((r) => setTimeout(r, 300));
  const got = good.received.filter((r) => r.json?.data?.id === sb);
  assert.deepEqual(
    got.map((r) => r.json.type),
    ['sandbox.created', 'sandbox.paused', 'sandbox.resumed', 'sandbox.deleted'],
  );
  assert.deepEqual(
    got.map((r) => r.json.data.status),
    ['active', 'paused', 'active', 'active'],
  );
  assert.equal(got[3]!.json.data.name, 'renamed');
  for (const r of got) {
    assert.ok(verify(SECRET, String(r.headers['x-sandpit-signature']), r.body, Math.floor(f.clock.now() / 1000)), 'signature verifies');
    assert.ok(!verify('whsec_another_secret_000000', String(r.headers['x-sandpit-signature']), r.body, Math.floor(f.clock.now() / 1000)));
    assert.equal(r.headers['x-sandpit-event-id'], r.json.id);
    assert.equal(r.headers['x-sandpit-event-type'], r.json.type);
    assert.equal(r.json.team_id, teamId);
    assert.equal(r.json.time, new Date(f.clock.now()).toISOString());
    assert.equal(r.json.data.access_token, undefined);
    assert.deepEqual(r.json.data.metadata, { run: 'w1' });
  }
  const ds = await until(async () => {
    const list = await deliveries(id);
    return list.length >= 4 && list.every((d) => d.status === 'delivered') && list;
  });
  assert.ok(ds.every((d) => d.attempts === 1 && d.last_status_code === 200 && d.attempt_log.length === 1));
  await api.del(`/webhooks/${id}`);
});

test('a receiver answering 500 is retried with exponential backoff; later events of that sandbox wait for it; after 24 h it has failed', async () => {
  flakyAnswer = (n) => ({ status: n <= 2 ? 500 : 200 });
  const id = await hook(flaky.url);
  const sb = (await api.post('/sandboxes', {})).body.id;
  await api.del(`/sandboxes/${sb}`);
  await until(() => flaky.received.length === 1, 15_000, 'the first attempt');
  await until(async () => (await deliveries(id)).find((d) => d.attempts === 1), 15_000, 'the attempt recorded');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(flaky.received.length, 1, 'the delete waits behind the created event');
  let [created] = (await deliveries(id)).filter((d) => d.event_type === 'sandbox.created');
  assert.equal(created.status, 'pending');
  assert.equal(created.last_status_code, 500);
  assert.equal(Date.parse(created.next_attempt_at) - f.clock.now(), 5000);
  f.clock.advance(5000);
  await until(() => flaky.received.length === 2, 15_000, 'the second attempt');
  await until(async () => (await deliveries(id)).find((d) => d.event_type === 'sandbox.created').attempts === 2);
  [created] = (await deliveries(id)).filter((d) => d.event_type === 'sandbox.created');
  assert.equal(Date.parse(created.next_attempt_at) - f.clock.now(), 10_000);
  f.clock.advance(10_000);
  await until(() => flaky.received.length === 4, 15_000, 'the third attempt and the delete');
  assert.deepEqual(
    flaky.received.map((r) => r.json.type),
    ['sandbox.created', 'sandbox.created', 'sandbox.created', 'sandbox.deleted'],
  );
  assert.equal(new Set(flaky.received.slice(0, 3).map((r) => r.json.id)).size, 1, 'one event id on every attempt');
  const all = await until(async () => {
    const list = await deliveries(id);
    return list.every((d) => d.status === 'delivered') && list;
  });
  assert.deepEqual(
    all.find((d) => d.event_type === 'sandbox.created').attempt_log.map((a: any) => a.status_code),
    [500, 500, 200],
  );

  // Never answered 2xx: given up once 24 h have passed since the event.
  flakyAnswer = () => ({ status: 503 });
  const sb2 = (await api.post('/sandboxes', {})).body.id;
  await until(() => flaky.received.length === 5, 15_000, 'an attempt');
  await until(async () => (await deliveries(id)).find((d) => d.status === 'pending' && d.attempts === 1), 15_000, 'the attempt recorded');
  f.clock.advance(24 * 3_600_000);
  await until(() => flaky.received.length === 6, 15_000, 'the last attempt');
  const last = await until(async () => (await deliveries(id)).find((d) => d.status === 'failed'));
  assert.equal(last.attempts, 2);
  assert.equal(last.next_attempt_at, undefined);
  await api.del(`/sandboxes/${sb2}`);
  await api.del(`/webhooks/${id}`);
});

test('a hanging receiver, one that closes early and one that redirects are retried, never followed, and hold up no other receiver or API call', async () => {
  const ids = { hang: await hook(hang.url), closer: await hook(closer.url), redirect: await hook(redirect.url), good: await hook(good.url) };
  good.received.length = 0;
  const started = performance.now();
  const sb = (await api.post('/sandboxes', {})).body.id;
  assert.ok(performance.now() - started < 1000);
  await until(() => good.received.some((r) => r.json.data.id === sb), 1400, 'the good receiver, while another hangs');
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    assert.equal((await api.get(`/sandboxes/${sb}`)).status, 200);
    // Well under the hanging receiver's timeout, on a loaded test host too.
    assert.ok(performance.now() - t0 < 1000, 'API calls are not held up');
  }
  const settled = async (id: string) => until(async () => (await deliveries(id)).find((d) => d.attempts >= 1), 4000, `an attempt on ${id}`);
  const h = await settled(ids.hang);
  assert.match(h.last_error, /timeout/);
  assert.equal(h.status, 'pending');
  const c = await settled(ids.closer);
  assert.ok(c.last_error, JSON.stringify(c));
  const r = await settled(ids.redirect);
  assert.equal(r.last_status_code, 302);
  assert.equal(r.status, 'pending');
  // The redirect's target got only its own delivery.
  assert.equal(good.received.filter((x) => x.json.data.id === sb).length, 1);
  for (const id of Object.values(ids)) await api.del(`/webhooks/${id}`);
  await api.del(`/sandboxes/${sb}`);
});

test('queued deliveries survive a restart and go out once the receiver is up', async () => {
  const id = await hook(`http://127.0.0.1:${downPort}/hook`, ['sandbox.created']);
  const sb = (await api.post('/sandboxes', {})).body.id;
  const first = await until(async () => (await deliveries(id)).find((d) => d.attempts === 1));
  assert.match(first.last_error, /ECONNREFUSED/);
  await f.close();
  const back = await Receiver.start(() => ({ status: 204 }), downPort);
  receivers.push(back);
  await f.open();
  api = f.api();
  f.clock.advance(5000);
  await until(() => back.received.length === 1, 15_000, 'the delivery after the restart');
  assert.equal(back.received[0]!.json.data.id, sb);
  const d = await until(async () => (await deliveries(id)).find((x) => x.status === 'delivered'));
  assert.equal(d.attempts, 2);
  assert.equal(d.last_status_code, 204);
  await api.del(`/webhooks/${id}`);
});

test('snapshot and template events come from their log; a test delivery goes out at once; members cannot manage webhooks', async () => {
  const id = await hook(good.url, ['snapshot.ready', 'template.failed']);
  good.received.length = 0;
  const sb = (await api.post('/sandboxes', {})).body.id;
  // The memory engine takes no snapshots: the store's write, as the snapshot service makes it.
  const id5 = '11111111-2222-4333-8444-555555555555';
  await snapshotReady(id5, sb.replace(/^sb-[a-z0-9]+-/, ''), f.clock.now(), { id: id5, status: 'ready' });
  await until(() => good.received.length === 1, 15_000, 'snapshot.ready');
  assert.equal(good.received[0]!.json.type, 'snapshot.ready');
  assert.deepEqual(good.received[0]!.json.data, { id: id5, status: 'ready' });

  const t = await api.post(`/webhooks/${id}/test`);
  assert.equal(t.status, 202);
  assert.equal(t.body.event_type, 'webhook.test');
  await until(() => good.received.length === 2, 2000, 'the test delivery');
  assert.equal(good.received[1]!.json.type, 'webhook.test');

  const invited = await api.post(`/teams/${teamId}/members`, { email: 'wm@example.com', full_name: 'W', role: 'member' });
  const member = f.api(invited.body.api_key.key);
  assert.equal((await member.get('/webhooks')).status, 403);
  assert.equal((await member.post('/webhooks', { url: good.url, events: ['*'] })).status, 403);
  const audit = (await api.get('/audit-log?resource_type=webhook')).body.entries.map((e: any) => e.action);
  assert.ok(audit.includes('webhook.create') && audit.includes('webhook.test') && audit.includes('webhook.delete'), String(audit));
  await api.del(`/sandboxes/${sb}`);
  await api.del(`/webhooks/${id}`);
});

test('an endpoint gets only events that happened after it was registered, even ones the outbox had not read yet', async () => {
  const now = f.clock.now();
  f.clock.advance(1000);
  const id = await hook(good.url, ['snapshot.ready']);
  good.received.length = 0;
  // Logged now, but it happened a second before the endpoint existed (as a slow transaction's event would be).
  const [before, later] = ['11111111-2222-4333-8444-555555555551', '11111111-2222-4333-8444-555555555552'];
  await snapshotReady(before, '99999999-2222-4333-8444-555555555555', now, { id: before });
  await snapshotReady(later, '99999999-2222-4333-8444-555555555555', f.clock.now(), { id: later });
  await until(() => good.received.length >= 1, 15_000, 'the later event');
  await new Promise((r) => setTimeout(r, 600));
  assert.deepEqual(
    good.received.map((r) => r.json.data.id),
    [later],
  );
  assert.equal((await deliveries(id)).length, 1);
  await api.del(`/webhooks/${id}`);
});
