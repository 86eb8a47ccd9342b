import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { isNamedAuditRoute } from '../src/services/audit/audit-actions.ts';
import { FakePlatform } from './helpers/fake-platform.ts';
import type { Api } from './helpers/server-process.ts';

// The audit log on the real routes and store, on an engine kept in memory.
let f: FakePlatform;
let api: Api;
let teamId: string;

before(async () => {
  f = await FakePlatform.start();
  api = f.api();
  teamId = (await api.get('/me')).body.team_id;
});
after(() => f?.destroy());

const entries = async (query = '', key?: string) => {
  const res = await f.api(key).get(`/audit-log${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.entries as any[];
};

test('every call that changes something is recorded with who, what, when, from where and its status; reads are not', async () => {
  const created = await api.post('/sandboxes', {}, { 'user-agent': 'audit-test/1' });
  assert.equal(created.status, 201);
  const id: string = created.body.id;
  await api.get(`/sandboxes/${id}`);
  assert.equal((await api.post(`/sandboxes/${id}/pause`)).status, 200);
  assert.equal((await api.post(`/sandboxes/${id}/pause`)).status, 409);
  // No agent in the memory engine: 503 (after resuming the sandbox), still recorded; the command is not.
  await api.post(`/sandboxes/${id}/exec`, { command: 'echo the-command-output' });
  // The data plane, through the sandbox's access token.
  await f.api(undefined).post('/exec', { command: 'true' }, { 'x-platform-sandbox-id': id, 'x-access-token': created.body.access_token });
  assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);

  const log = await entries(`?resource_id=${id}`);
  assert.deepEqual(
    log.map((e) => [e.action, e.status]),
    [
      ['sandbox.delete', 204],
      ['sandbox.exec', 503],
      ['sandbox.exec', 503],
      ['sandbox.pause', 409],
      ['sandbox.pause', 200],
      ['sandbox.create', 201],
    ],
  );
  const create = log.at(-1);
  const me = (await api.get('/me')).body;
  assert.deepEqual(create.actor, { type: 'api_key', key_id: me.key_id, user_id: me.user_id });
  assert.deepEqual(create.resource, { type: 'sandbox', id });
  assert.deepEqual(create.request, { method: 'POST', route: '/sandboxes', ip: '127.0.0.1', user_agent: 'audit-test/1' });
  assert.ok(Math.abs(Date.parse(create.at) - f.clock.now()) < 1000);
  assert.deepEqual(log[1].actor, { type: 'access_token' });
  assert.equal(log[1].request.route, '/exec');
  const text = JSON.stringify(log);
  assert.doesNotMatch(text, /the-command-output/);
  assert.ok(!text.includes(created.body.access_token) && !text.includes(f.key));
});

test('secret values, keys and tokens never appear; secrets, keys and members are recorded by name and id', async () => {
  assert.equal((await api.post('/secrets', { name: 'GH_TOKEN', value: 'ghp_supersecretvalue123' })).status, 201);
  assert.equal((await api.del('/secrets/GH_TOKEN')).status, 204);
  const key = await api.post('/api-keys', { name: 'ci', permissions: ['sandboxes:read'] });
  assert.equal(key.status, 201);
  assert.equal((await api.del(`/api-keys/${key.body.id}`)).status, 204);
  const all = await entries();
  const text = JSON.stringify(all);
  assert.doesNotMatch(text, /ghp_supersecretvalue123/);
  assert.ok(!text.includes(key.body.key));
  assert.ok(!text.includes(f.key));
  const actions = all.map((e) => `${e.action} ${e.resource.id ?? ''}`.trim());
  for (const a of ['secret.create', 'secret.revoke GH_TOKEN', `api_key.create ${key.body.id}`, `api_key.revoke ${key.body.id}`]) assert.ok(actions.includes(a), `${a} in ${actions}`);
});

test('console sign-in and sign-out are recorded as the key that signed in', async () => {
  const signIn = await fetch(`${f.p.url}/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: f.key }) });
  assert.equal(signIn.status, 200);
  const cookie = String(signIn.headers.get('set-cookie')).split(';')[0]!;
  assert.equal((await fetch(`${f.p.url}/session`, { method: 'DELETE', headers: { cookie } })).status, 204);
  const me = (await api.get('/me')).body;
  const log = await entries('?resource_type=console_session');
  assert.deepEqual(
    log.map((e) => [e.action, e.actor.key_id, e.status]),
    [
      ['console_session.delete', me.key_id, 204],
      ['console_session.create', me.key_id, 200],
    ],
  );
  assert.ok(!JSON.stringify(log).includes(cookie.split('=')[1]!));
});

test('filters: action, resource type, actor, time; pages follow the cursor', async () => {
  const a = (await api.post('/sandboxes', {})).body.id;
  const b = (await api.post('/sandboxes', {})).body.id;
  await api.del(`/sandboxes/${a}`);
  await api.del(`/sandboxes/${b}`);
  const deletes = await entries('?action=sandbox.delete');
  assert.ok(deletes.length >= 2 && deletes.every((e) => e.action === 'sandbox.delete'));
  assert.ok((await entries('?resource_type=secret')).every((e) => e.resource.type === 'secret'));
  const keyId = (await api.get('/me')).body.key_id;
  assert.ok((await entries(`?actor=${keyId}`)).length > 0);
  assert.equal((await entries('?actor=00000000-0000-0000-0000-000000000000')).length, 0);
  const now = new Date(f.clock.now()).toISOString();
  const later = new Date(f.clock.now() + 1000).toISOString();
  assert.ok((await entries(`?since=${now}`)).length > 0);
  assert.equal((await entries(`?since=${later}`)).length, 0);
  assert.equal((await entries(`?until=${now}`)).length, 0);
  assert.equal((await api.get('/audit-log?since=yesterday')).status, 400);

  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.get(`/audit-log?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
    seen.push(...page.body.entries.map((e: any) => e.id));
    cursor = page.body.next_cursor;
  } while (cursor);
  const whole = await entries('?limit=1000');
  assert.deepEqual(
    seen,
    whole.map((e) => e.id),
  );
});

test('admins read it; a member cannot; it cannot be changed or deleted through the API', async () => {
  const invited = await api.post(`/teams/${teamId}/members`, { email: 'm@example.com', full_name: 'M', role: 'member' });
  assert.equal(invited.status, 201, JSON.stringify(invited.body));
  const member = f.api(invited.body.api_key.key);
  assert.equal((await member.get('/audit-log')).status, 403);
  const invite = (await entries('?action=member.invite'))[0];
  assert.equal(invite.resource.id, invited.body.member.user_id);
  assert.ok(!JSON.stringify(invite).includes(invited.body.api_key.key));
  const one = (await entries('?limit=1'))[0];
  for (const method of ['DELETE', 'PATCH', 'PUT', 'POST']) {
    const res = await api.req(method, `/audit-log${method === 'DELETE' || method === 'PATCH' ? `/${one.id}` : ''}`, method === 'DELETE' ? undefined : {});
    assert.equal(res.status, 404, `${method} answered ${res.status}`);
  }
  assert.deepEqual(
    (await entries('?limit=1000')).find((e) => e.id === one.id),
    one,
  );
});

test('every mutating route of the API has an audit action name', async () => {
  const doc = (await api.get('/openapi.json')).body;
  const unnamed: string[] = [];
  for (const [path, ops] of Object.entries<Record<string, unknown>>(doc.paths)) {
    const route = path.replace(/\{([^}]+)\}/g, ':$1');
    for (const method of Object.keys(ops)) {
      if (!['post', 'put', 'patch', 'delete'].includes(method) || route.startsWith('/internal/')) continue;
      if (!isNamedAuditRoute(method.toUpperCase(), route)) unnamed.push(`${method.toUpperCase()} ${route}`);
    }
  }
  assert.deepEqual(unnamed, []);
});

test('entries older than the retention are pruned', async () => {
  const before = (await entries('?limit=1000')).length;
  assert.ok(before > 0);
  f.clock.advance(91 * 86_400_000);
  await api.post('/secrets', { name: 'LATER', value: 'v' });
  await f.close();
  await f.open();
  const left = await entries('?limit=1000');
  assert.deepEqual(
    left.map((e) => e.action),
    ['secret.create'],
  );
});

test("the E2B port's control-plane calls are recorded as on the main API", async () => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const e = await FakePlatform.start({ env: { SANDPIT_E2B_PORT: String(port) } });
  try {
    const res = await fetch(`http://127.0.0.1:${port}/sandboxes`, {
      method: 'POST',
      headers: { 'x-api-key': e.key, 'content-type': 'application/json' },
      body: JSON.stringify({ templateID: 'base' }),
    });
    assert.equal(res.status, 201, await res.clone().text());
    const { sandboxID } = (await res.json()) as { sandboxID: string };
    assert.equal((await fetch(`http://127.0.0.1:${port}/sandboxes/${sandboxID}`, { method: 'DELETE', headers: { 'x-api-key': e.key } })).status, 204);
    const log = (await e.api().get('/audit-log')).body.entries.map((x: any) => [x.action, x.resource.id, x.request.route, x.status]);
    assert.deepEqual(log, [
      ['sandbox.delete', `sb-local-${sandboxID}`, 'e2b /sandboxes/:sandboxID', 204],
      ['sandbox.create', `sb-local-${sandboxID}`, 'e2b /sandboxes', 201],
    ]);
  } finally {
    await e.destroy();
  }
});
