import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { until } from './helpers/cluster-steps.ts';
import { Api, CLI, ServerProcess } from './helpers/server-process.ts';

const TAGGED = /^sb-[a-z0-9]+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const bare = (id: string) => id.replace(/^sb-[a-z0-9]+-/, '');

function assertEnvelope(res: { status: number; body: any }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(typeof res.body?.error?.message, 'string');
  assert.equal(res.body.error.code, code);
}

let server: ServerProcess;
let api: Api;

before(async () => {
  server = await ServerProcess.start({ SANDPIT_MAX_ACTIVE_SANDBOXES: '4' });
  api = new Api(server.url, server.key);
});
after(async () => {
  await server?.stop();
});

async function create(body?: unknown) {
  const res = await api.post('/sandboxes', body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

async function countAll(): Promise<number> {
  return (await api.get('/sandboxes?limit=1000')).body.sandboxes.length;
}

describe('discovery and auth', () => {
  test('GET /info needs no key and names the data plane', async () => {
    const res = await new Api(server.url).get('/info');
    assert.equal(res.status, 200);
    assert.equal(res.body.version, '0.1.0');
    assert.match(res.body.sandbox_url, /\{sandbox_id\}/);
    assert.match(res.body.preview_url, /\{port\}/);
    assert.match(res.body.data_plane_url, /^http:\/\//);
    assert.ok(['container', 'gvisor'].includes(res.body.driver));
  });

  test('OpenAPI 3.1 document lists the routes', async () => {
    const res = await new Api(server.url).get('/openapi.json');
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    for (const p of ['/sandboxes', '/sandboxes/{sandbox_id}', '/sandboxes/{sandbox_id}/exec', '/exec', '/exec/stream', '/info']) {
      assert.ok(res.body.paths[p], `missing ${p}`);
    }
    assert.deepEqual(res.body.paths['/sandboxes'].post.security, [{ ApiKey: [] }]);
  });

  test('missing and wrong API keys answer 401 in the envelope', async () => {
    assertEnvelope(await new Api(server.url).get('/sandboxes'), 401, 'unauthorized');
    assertEnvelope(await new Api(server.url, 'nope').post('/sandboxes', { name: 'x' }), 401, 'unauthorized');
  });

  test('unknown routes and malformed JSON use the envelope', async () => {
    assertEnvelope(await api.get('/no/such/route'), 404, 'not_found');
    assertEnvelope(await api.post('/sandboxes', '{"name": '), 400, 'bad_request');
  });

  test('GET /me names the team of the key', async () => {
    const res = await api.get('/me');
    assert.equal(res.status, 200);
    assert.match(res.body.team_id, /^[0-9a-f-]{36}$/);
    assert.ok(res.body.permissions.includes('billing:read'));
  });

  test('API keys: create a subset key, list, revoke', async () => {
    const made = await api.post('/api-keys', { name: 'no-billing', permissions: ['sandboxes:read'] });
    assert.equal(made.status, 201);
    assert.deepEqual(made.body.permissions, ['sandboxes:read']);
    const limited = new Api(server.url, made.body.key);
    assert.equal((await limited.get('/sandboxes')).status, 200);
    assertEnvelope(await limited.post('/sandboxes', {}), 403, 'forbidden');
    assertEnvelope(await limited.post('/api-keys', { name: 'x' }), 403, 'forbidden');
    assertEnvelope(await api.post('/api-keys', { name: 'bad', permissions: ['root'] }), 400, 'bad_request');
    const listed = await api.get('/api-keys');
    assert.ok(listed.body.api_keys.some((k: any) => k.id === made.body.id && !('key' in k)));
    assert.equal((await api.del(`/api-keys/${made.body.id}`)).status, 204);
    assertEnvelope(await limited.get('/sandboxes'), 401, 'unauthorized');
    assertEnvelope(await api.del(`/api-keys/${made.body.id}`), 404, 'not_found');
  });
});

describe('create', () => {
  test('defaults: tagged id, active, every documented field', async () => {
    const sb = await create();
    assert.match(sb.id, TAGGED);
    assert.equal(sb.status, 'active');
    assert.equal(sb.template_id, 'platform/base');
    assert.deepEqual(sb.metadata, {});
    assert.equal(sb.preview_access, 'public');
    assert.deepEqual(sb.secrets, []);
    assert.deepEqual(sb.resources, { vcpu_count: 1, memory_mib: 1024, disk_mib: 4096 });
    assert.equal(typeof sb.access_token, 'string');
    for (const absent of ['auto_pause_seconds', 'auto_delete_seconds', 'auto_delete_at', 'network', 'latest_snapshot_id', 'name']) {
      assert.ok(!(absent in sb), `${absent} should be absent`);
    }
    const got = await api.get(`/sandboxes/${sb.id}`);
    assert.equal(got.status, 200);
    assert.ok(!('access_token' in got.body), 'GET must not return the access token');
    assert.deepEqual(got.body.secrets, []);
    assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
  });

  test('every field is stored and returned', async () => {
    assert.equal((await api.post('/secrets', { name: 'my-secret', value: 'not-in-the-sandbox' })).status, 201);
    const sb = await create({
      name: 'full',
      auto_pause_seconds: 3600,
      auto_delete_seconds: 60,
      metadata: { count: '42', owner: 'me' },
      env: { FOO: 'bar' },
      network: { allow_out: ['1.1.1.1', '*.example.com'], deny_out: ['8.8.8.0/24'] },
      secrets: { TOKEN: 'my-secret' },
      preview_access: 'private',
    });
    assert.equal(sb.name, 'full');
    assert.equal(sb.auto_pause_seconds, 3600);
    assert.equal(sb.auto_delete_seconds, 60);
    assert.ok(!('auto_delete_at' in sb), 'deadline is armed only on pause');
    assert.deepEqual(sb.metadata, { count: '42', owner: 'me' });
    assert.deepEqual(sb.network, { allow_out: ['1.1.1.1/32', '*.example.com'], deny_out: ['8.8.8.0/24'] });
    assert.deepEqual(sb.secrets, [{ env: 'TOKEN', secret: 'my-secret', revoked: false }]);
    assert.equal(sb.preview_access, 'private');
    await api.del(`/sandboxes/${sb.id}`);
  });

  test('bad input answers 400 and stores nothing', async () => {
    const before = await countAll();
    const big = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    const bodies: unknown[] = [
      { name: '' },
      { name: 'x'.repeat(65) },
      { name: 5 },
      { auto_pause_seconds: 0 },
      { auto_pause_seconds: 604801 },
      { auto_pause_seconds: 1.5 },
      { auto_pause_seconds: '10' },
      { auto_delete_seconds: -1 },
      { auto_delete_seconds: 2592001 },
      { metadata: big },
      { metadata: { ['k'.repeat(257)]: 'v' } },
      { metadata: { k: 'v'.repeat(2049) } },
      { metadata: { n: 42 } },
      { metadata: { 'platform.x': 'v' } },
      { metadata: { _PLATFORM_x: 'v' } },
      { metadata: { 'Platform.Owner': 'v' } },
      { metadata: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, 'v'.repeat(2000)])) },
      { preview_access: 'legacy_public' },
      { preview_access: 'open' },
      { network: { deny_out: ['example.com'] } },
      { network: { allow_out: ['not a domain!'] } },
      { network: { allow_out: ['10.0.0.0/33'] } },
      { network: { other: [] } },
      { env: { '1BAD': 'x' } },
      { secrets: { 'BAD-NAME': 's' } },
      { unknown_field: true },
      [],
      'text',
    ];
    for (const body of bodies) {
      const res = await api.post('/sandboxes', body);
      assertEnvelope(res, 400, 'bad_request');
    }
    assertEnvelope(await api.post('/sandboxes', { from_template: 'nope/none' }), 404, 'not_found');
    assert.equal(await countAll(), before);
  });

  test('the per-team active cap answers 429 too_many_sandboxes', async () => {
    const made = [];
    for (let i = 0; i < 4; i++) made.push(await create());
    assertEnvelope(await api.post('/sandboxes', {}), 429, 'too_many_sandboxes');
    // A paused sandbox does not count; resuming it past the cap is refused.
    assert.equal((await api.post(`/sandboxes/${made[0].id}/pause`)).status, 200);
    const fifth = await create();
    assertEnvelope(await api.post(`/sandboxes/${made[0].id}/resume`), 429, 'too_many_sandboxes');
    for (const sb of [...made, fifth]) assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
  });
});

describe('get, list, ids', () => {
  test('both id forms work; malformed ids are 400; unknown are 404', async () => {
    const sb = await create();
    assert.equal((await api.get(`/sandboxes/${bare(sb.id)}`)).body.id, sb.id);
    assert.equal((await api.get(`/sandboxes/${bare(sb.id).toUpperCase()}`)).body.id, sb.id);
    assert.equal((await api.get(`/sandboxes/${sb.id}`)).status, 200);
    assertEnvelope(await api.get('/sandboxes/not-an-id'), 400, 'bad_request');
    assertEnvelope(await api.get('/sandboxes/00000000-0000-4000-8000-000000000000'), 404, 'not_found');
    assertEnvelope(await api.get('/sandboxes/sb-local-00000000-0000-4000-8000-000000000000'), 404, 'not_found');
    await api.del(`/sandboxes/${sb.id}`);
  });

  test('another team (made with the CLI) never sees the sandbox: 404', async () => {
    const sb = await create();
    const made = spawnSync(process.execPath, [CLI, 'team', 'create', 'other-team', '--json'], {
      env: { ...process.env, SANDPIT_DATA_DIR: server.dataDir, SANDPIT_DATABASE_URL: server.env.SANDPIT_DATABASE_URL ?? '' },
      encoding: 'utf8',
    });
    assert.equal(made.status, 0, made.stderr);
    const other = new Api(server.url, JSON.parse(made.stdout).api_key);
    assertEnvelope(await other.get(`/sandboxes/${sb.id}`), 404, 'not_found');
    assertEnvelope(await other.post(`/sandboxes/${sb.id}/pause`), 404, 'not_found');
    assertEnvelope(await other.del(`/sandboxes/${sb.id}`), 404, 'not_found');
    assert.equal((await other.get('/sandboxes')).body.sandboxes.length, 0);
    assert.equal((await api.get(`/sandboxes/${sb.id}`)).body.status, 'active');
    await api.del(`/sandboxes/${sb.id}`);
  });

  test('list: metadata filter without coercion, status filter, cursor pages', async () => {
    const a = await create({ metadata: { count: '42', group: 'g1' } });
    const b = await create({ metadata: { count: '042', group: 'g1' } });
    const c = await create({ metadata: { group: 'g2' } });
    const byCount = await api.get('/sandboxes?metadata.count=42');
    assert.deepEqual(
      byCount.body.sandboxes.map((s: any) => s.id),
      [a.id],
    );
    const g1 = await api.get('/sandboxes?metadata.group=g1');
    assert.deepEqual(new Set(g1.body.sandboxes.map((s: any) => s.id)), new Set([a.id, b.id]));
    const both = await api.get('/sandboxes?metadata.group=g1&metadata.count=042');
    assert.deepEqual(
      both.body.sandboxes.map((s: any) => s.id),
      [b.id],
    );
    await api.post(`/sandboxes/${c.id}/pause`);
    const paused = await api.get('/sandboxes?status=paused');
    assert.deepEqual(
      paused.body.sandboxes.map((s: any) => s.id),
      [c.id],
    );
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.get(`/sandboxes?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(page.status, 200);
      assert.ok(page.body.sandboxes.length <= 1);
      seen.push(...page.body.sandboxes.map((s: any) => s.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    assert.deepEqual(new Set(seen), new Set([a.id, b.id, c.id]));
    assert.equal(seen.length, 3);
    // A filtered walk by cursor keeps the unfiltered list's order, restricted to the matches.
    const g1Seen: string[] = [];
    do {
      const page = await api.get(`/sandboxes?limit=1&metadata.group=g1${cursor ? `&cursor=${cursor}` : ''}`);
      g1Seen.push(...page.body.sandboxes.map((s: any) => s.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    assert.deepEqual(
      g1Seen,
      seen.filter((id) => id === a.id || id === b.id),
    );
    assert.equal((await api.del(`/sandboxes/${a.id}`)).status, 204);
    assert.deepEqual(
      (await api.get('/sandboxes?metadata.group=g1')).body.sandboxes.map((s: any) => s.id),
      [b.id],
      'a deleted sandbox no longer matches',
    );
    assertEnvelope(await api.get('/sandboxes?limit=0'), 400, 'bad_request');
    assertEnvelope(await api.get('/sandboxes?limit=abc'), 400, 'bad_request');
    assertEnvelope(await api.get('/sandboxes?status=sleeping'), 400, 'bad_request');
    assertEnvelope(await api.get('/sandboxes?cursor=%%%'), 400, 'bad_request');
    for (const sb of [b, c]) await api.del(`/sandboxes/${sb.id}`);
  });
});

describe('state machine', () => {
  test('pause, pause again 409, resume with token, resume again 409, activate idempotent', async () => {
    const sb = await create({ auto_delete_seconds: 600 });
    const paused = await api.post(`/sandboxes/${sb.id}/pause`);
    assert.equal(paused.status, 200);
    assert.equal(paused.body.status, 'paused');
    assert.ok(!('access_token' in paused.body));
    const deadline = Date.parse(paused.body.auto_delete_at);
    assert.ok(Math.abs(deadline - (Date.now() + 600_000)) < 10_000, 'auto-delete deadline armed on pause');
    assertEnvelope(await api.post(`/sandboxes/${sb.id}/pause`), 409, 'conflict');
    assertEnvelope(await api.patch(`/sandboxes/${sb.id}`, { network: { deny_out: ['1.2.3.0/24'] } }), 409, 'conflict');
    const activated = await api.post(`/sandboxes/${sb.id}/activate`);
    assert.equal(activated.status, 200);
    assert.equal(activated.body.status, 'active');
    assert.equal(activated.body.access_token, sb.access_token);
    assert.ok(!('auto_delete_at' in activated.body), 'resume clears the deadline');
    assertEnvelope(await api.post(`/sandboxes/${sb.id}/resume`), 409, 'conflict');
    const again = await api.post(`/sandboxes/${sb.id}/activate`);
    assert.equal(again.status, 200);
    assert.equal(again.body.access_token, sb.access_token);
    await api.post(`/sandboxes/${sb.id}/pause`);
    const resumed = await api.post(`/sandboxes/${sb.id}/resume`, undefined, { 'content-type': 'application/json' });
    assert.equal(resumed.status, 200);
    assert.equal(resumed.body.status, 'active');
    assert.equal(typeof resumed.body.access_token, 'string');
    assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
    assertEnvelope(await api.del(`/sandboxes/${sb.id}`), 404, 'not_found');
    assertEnvelope(await api.get(`/sandboxes/${sb.id}`), 404, 'not_found');
    assertEnvelope(await api.post(`/sandboxes/${sb.id}/pause`), 404, 'not_found');
  });

  test('migrate on one host: 409 and nothing changes; it needs sandboxes:move; the node is shown only with that permission', async () => {
    const sb = await create();
    assertEnvelope(await api.post(`/sandboxes/${sb.id}/migrate`, {}), 409, 'conflict');
    assertEnvelope(await api.post(`/sandboxes/${sb.id}/migrate`, { node: 7 }), 400, 'bad_request');
    assertEnvelope(await api.post('/sandboxes/sb-local-00000000-0000-4000-8000-000000000000/migrate', {}), 404, 'not_found');
    const made = await api.post('/api-keys', { name: 'runner', permissions: ['sandboxes:read', 'sandboxes:write'] });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const runner = new Api(server.url, made.body.key);
    assertEnvelope(await runner.post(`/sandboxes/${sb.id}/migrate`, {}), 403, 'forbidden');
    const seen = await runner.get(`/sandboxes/${sb.id}`);
    assert.equal(seen.body.status, 'active');
    assert.ok(!('node' in seen.body));
    assert.equal((await api.del(`/api-keys/${made.body.id}`)).status, 204);
    assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
  });

  test('patch: name, metadata replaced, timers set and cleared, network set and reset', async () => {
    const sb = await create({ metadata: { a: '1' } });
    const res = await api.patch(`/sandboxes/${sb.id}`, {
      name: 'renamed',
      metadata: { b: '2' },
      auto_pause_seconds: 100,
      auto_delete_seconds: 0,
      network: { deny_out: ['1.2.3.4'] },
      preview_access: 'private',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.name, 'renamed');
    assert.deepEqual(res.body.metadata, { b: '2' });
    assert.equal(res.body.auto_pause_seconds, 100);
    assert.equal(res.body.auto_delete_seconds, 0);
    assert.deepEqual(res.body.network, { deny_out: ['1.2.3.4/32'] });
    assert.equal(res.body.preview_access, 'private');
    const cleared = await api.patch(`/sandboxes/${sb.id}`, { auto_pause_seconds: null, auto_delete_seconds: null, network: null });
    assert.ok(!('auto_pause_seconds' in cleared.body));
    assert.ok(!('auto_delete_seconds' in cleared.body));
    assert.ok(!('network' in cleared.body));
    for (const bad of [{ metadata: { 'platform.x': '1' } }, { preview_access: 'legacy_public' }, { auto_pause_seconds: 0 }, { status: 'paused' }, { name: '' }]) {
      assertEnvelope(await api.patch(`/sandboxes/${sb.id}`, bad), 400, 'bad_request');
    }
    assert.deepEqual((await api.get(`/sandboxes/${sb.id}`)).body.metadata, { b: '2' });
    assert.equal((await api.get('/sandboxes?metadata.a=1')).body.sandboxes.length, 0);
    assert.equal((await api.get('/sandboxes?metadata.b=2')).body.sandboxes.length, 1);
    await api.del(`/sandboxes/${sb.id}`);
  });

  test('auto-pause after the active session reaches its limit; auto_delete_seconds 0 deletes on pause', async () => {
    const keep = await create({ auto_pause_seconds: 1 });
    const gone = await create({ auto_pause_seconds: 1, auto_delete_seconds: 0 });
    // The deadline fires after 1 s; the pause itself takes what the engine takes.
    await until('the first sandbox paused', async () => (await api.get(`/sandboxes/${keep.id}`)).body.status === 'paused');
    await until('the second sandbox deleted', async () => (await api.get(`/sandboxes/${gone.id}`)).status === 404);
    assertEnvelope(await api.get(`/sandboxes/${gone.id}`), 404, 'not_found');
    const resumed = await api.post(`/sandboxes/${keep.id}/resume`);
    assert.equal(resumed.body.status, 'active', 'resume starts a fresh window');
    await api.del(`/sandboxes/${keep.id}`);
  });

  test('pause with auto_delete_seconds 0 deletes at pause; PATCH on a paused sandbox arms the deadline', async () => {
    const zero = await create({ auto_delete_seconds: 0 });
    assert.equal((await api.post(`/sandboxes/${zero.id}/pause`)).status, 200);
    assertEnvelope(await api.get(`/sandboxes/${zero.id}`), 404, 'not_found');
    const sb = await create();
    await api.post(`/sandboxes/${sb.id}/pause`);
    assert.ok(!('auto_delete_at' in (await api.get(`/sandboxes/${sb.id}`)).body));
    const armed = await api.patch(`/sandboxes/${sb.id}`, { auto_delete_seconds: 3600 });
    assert.ok(Math.abs(Date.parse(armed.body.auto_delete_at) - (Date.now() + 3_600_000)) < 10_000);
    const disarmed = await api.patch(`/sandboxes/${sb.id}`, { auto_delete_seconds: null });
    assert.ok(!('auto_delete_at' in disarmed.body));
    await api.del(`/sandboxes/${sb.id}`);
  });
});

describe('request rate', () => {
  test('429 rate_limited past the configured rate', async () => {
    const limited = await ServerProcess.start({ SANDPIT_RATE_LIMIT: '5', SANDPIT_RATE_LIMIT_WINDOW_MS: '60000' });
    try {
      const c = new Api(limited.url, limited.key);
      const statuses: number[] = [];
      let last: any;
      for (let i = 0; i < 8; i++) {
        last = await c.get('/sandboxes');
        statuses.push(last.status);
      }
      assert.deepEqual(statuses.slice(0, 5), [200, 200, 200, 200, 200]);
      assertEnvelope(last, 429, 'rate_limited');
    } finally {
      // The limit also guards the cleanup's own calls; nothing was created, so stop just removes the directory.
      await limited.kill9();
      await limited.stop();
    }
  });
});
