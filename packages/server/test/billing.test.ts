import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { ManualClock } from '../src/clock.ts';
import { InProcess } from './helpers/in-process.ts';
import { Api, CLI } from './helpers/server-process.ts';

const S = 1000;
const H = 3600 * S;
// Rates chosen so charges are easy to check: 1 USD per vCPU-second, 1e-5 USD per MiB-second.
const RATES = { vcpu_hour_usd: 3600, memory_gib_hour_usd: 36.864, storage_gib_hour_usd: 36.864 };
const PER_VCPU_S = 1;
const PER_MIB_S = 1e-5;
const TRIAL = 100;

const close = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: expected ${expected}, got ${actual}`);
const bare = (id: string) => id.replace(/^sb-[a-z0-9]+-/, '');

function assertEnvelope(res: { status: number; body: any }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.error.code, code);
  assert.equal(typeof res.body.error.message, 'string');
}

test('metering, pricing and periods from a scripted sandbox lifecycle', async (t) => {
  const env = await InProcess.start(Date.UTC(2031, 0, 10, 12, 0, 0), `sp_test_${randomBytes(12).toString('hex')}`);
  t.after(() => env.destroy());
  await env.p.db.updateTable('pricing_plans').set(RATES).where('plan_key', '=', 'standard').execute();
  let api = env.api();
  const me = (await api.get('/me')).body;
  const team = me.team_id;

  const advance = (ms: number) => env.clock.advance(ms);
  const create = async () => {
    const res = await api.post('/sandboxes', {});
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as string;
  };
  const usage = async (q = '') => {
    const res = await api.get(`/teams/${team}/billing/usage${q}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  const perSandbox = async (q = '') => {
    const res = await api.get(`/teams/${team}/billing/usage/sandboxes${q}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  let lifecycleStorage = 0;
  await t.test('create, 90 s active, pause 1 h, resume, 30 s active, delete: exact usage and charges', async () => {
    const id = await create();
    // Real bytes on the sandbox disk; sync makes the filesystem account them now.
    const dd = await api.post(`/sandboxes/${id}/exec`, { command: 'dd if=/dev/urandom of=/home/user/blob bs=1M count=8 status=none && sync' });
    assert.equal(dd.body.exit_code, 0, dd.body.stderr);
    advance(90 * S);
    assert.equal((await api.post(`/sandboxes/${id}/pause`)).status, 200);
    advance(H);
    assert.equal((await api.post(`/sandboxes/${id}/resume`)).status, 200);
    advance(30 * S);
    const mid = await usage();
    assert.equal(mid.vcpu_seconds, 120, 'active seconds so far');
    assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
    advance(10 * 60 * S);

    const u = await usage();
    assert.equal(u.status, 'open');
    assert.equal(u.team_id, team);
    assert.equal(u.period_start, '2031-01-01T00:00:00.000Z');
    assert.equal(u.period_end, '2031-02-01T00:00:00.000Z');
    assert.equal(u.finalized_at, null);
    assert.equal(u.exported_at, null);
    assert.equal(u.vcpu_seconds, 120);
    assert.equal(u.memory_mib_seconds, 120 * 1024);
    close(u.cpu_vcpu_hours, 120 / 3600, 'vCPU-hours');
    close(u.memory_gib_hours, 120 / 3600, 'GiB-hours');
    // Real bytes were on the disk, never more than its 4 GiB cap, for its 3720 s life (engines account writes with some lag).
    assert.ok(u.storage_mib_seconds > 0, `storage ${u.storage_mib_seconds}`);
    assert.ok(u.storage_mib_seconds <= 4096 * 3720, `storage ${u.storage_mib_seconds}`);
    close(u.storage_gib_hours, u.storage_mib_seconds / 1024 / 3600, 'storage GiB-hours');
    assert.deepEqual(
      u.resources.map((l: any) => [l.resource_key, l.resource, l.unit, l.sort_order, l.tracked, l.billable]),
      [
        ['vcpu_seconds', 'compute', 'vcpu_second', 10, true, true],
        ['memory_mib_seconds', 'memory', 'mib_second', 20, true, true],
        ['storage_mib_seconds', 'storage', 'mib_second', 30, true, true],
      ],
    );
    for (const l of u.resources) {
      assert.deepEqual(u.resources_by_key[l.resource_key], l);
      assert.equal('charge_usd' in l, false, 'usage lines carry no charge');
    }
    lifecycleStorage = u.storage_mib_seconds;
    t.diagnostic(`lifecycle storage: ${lifecycleStorage} MiB-s`);

    const sb = await perSandbox();
    assert.equal(sb.sandboxes.length, 1);
    assert.equal(bare(sb.sandboxes[0].sandbox_id), bare(id));
    assert.equal(sb.sandboxes[0].deleted, true);
    assert.equal(sb.sandboxes[0].vcpu_seconds, 120);
    close(sb.sandboxes[0].storage_mib_seconds, lifecycleStorage, 'per-sandbox storage');

    const res = await api.get('/billing/summary');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const s = res.body;
    const compute = 120 * PER_VCPU_S;
    const memory = 120 * 1024 * PER_MIB_S;
    const storage = lifecycleStorage * PER_MIB_S;
    const total = compute + memory + storage;
    close(s.cost_breakdown_usd.compute, compute, 'compute');
    close(s.cost_breakdown_usd.memory, memory, 'memory');
    close(s.cost_breakdown_usd.storage, storage, 'storage');
    close(s.current_charges_usd, total, 'charges before credits');
    close(s.credits_applied_usd, TRIAL, 'the whole trial credit is applied');
    close(s.credits_remaining_usd, 0, 'nothing left');
    close(s.expected_invoice_amount_usd, total - TRIAL, 'invoice after credits');
    assert.deepEqual(s.trial, { grant_usd: TRIAL, consumed_usd: TRIAL, remaining_usd: 0, state: 'exhausted', eligible: true });
    close(s.resources_by_key.vcpu_seconds.charge_usd, compute, 'vCPU line');
    close(s.resources_by_key.vcpu_seconds.unit_price_usd, PER_VCPU_S, 'vCPU price');
    assert.equal(s.resources_by_key.memory_mib_seconds.usage, 120 * 1024);
    assert.deepEqual(s.billing_period, { start: '2031-01-01T00:00:00.000Z', end: '2031-02-01T00:00:00.000Z' });
    assert.deepEqual(s.pricing_tier, { plan_key: 'standard', plan_name: 'Standard', currency: 'USD' });
    assert.equal(s.mode, 'shadow');
    assert.equal(s.billing_mode, 'shadow');
    assert.equal(s.credit_source, 'local_trial');
    assert.equal(s.credit_status, 'available');
    assert.equal(s.payments_remaining_credit_usd, null);
    assert.equal(s.payments_credit_balance_usd, 0);
    assert.equal(s.payments_credits_applied_usd, 0);
    assert.deepEqual(s.permissions, { can_view: true, can_manage: false });
    assert.equal(s.checkout_available, false);
    assert.equal(s.portal_available, false);
    assert.equal(s.payment_setup_required, false);
    assert.equal(s.calculated_at, new Date(env.clock.now()).toISOString());
    assert.equal(s.credit_observed_at, s.calculated_at);
  });

  await t.test('the OpenAPI document carries the billing and team routes and the documented choices', async () => {
    const doc = (await api.get('/openapi.json')).body;
    for (const path of [
      '/billing/summary',
      '/teams/{team_id}/billing/usage',
      '/teams/{team_id}/billing/usage/sandboxes',
      '/teams/{team_id}/billing/periods',
      '/teams/{team_id}/management',
      '/teams/{team_id}/members/{user_id}',
      '/metrics',
    ]) {
      assert.ok(doc.paths[path], `missing ${path}`);
    }
    assert.match(doc.paths['/teams/{team_id}/billing/usage'].get.description, /other than the caller's answers 403/);
    assert.ok(doc.paths['/teams/{team_id}/billing/usage'].get.parameters.some((p: any) => p.in === 'query' && p.name === 'period_id'));
    assert.deepEqual(doc.paths['/billing/summary'].get.security, [{ ApiKey: [] }]);
    assert.deepEqual(doc.paths['/metrics'].get.security, []);
  });

  await t.test('a snapshot is billed its size from ready to deleted, on the sandbox it came from', async (st) => {
    const id = await create();
    const snap = await api.post(`/sandboxes/${id}/snapshot`, {});
    if (snap.status === 503) {
      assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
      return st.skip('this engine does not take snapshots');
    }
    assert.equal(snap.status, 201, JSON.stringify(snap.body));
    assert.ok(snap.body.size_bytes > 0);
    const before = (await usage()).storage_mib_seconds;
    // Without its sandbox, the snapshot alone holds storage for 10 minutes.
    assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
    const afterDelete = (await usage()).storage_mib_seconds;
    advance(600 * S);
    assert.equal((await api.del(`/snapshots/${snap.body.id}`)).status, 204);
    advance(600 * S);
    close((await usage()).storage_mib_seconds - afterDelete, (snap.body.size_bytes / 1024 / 1024) * 600, 'snapshot storage');
    const row = (await perSandbox()).sandboxes.find((x: any) => bare(x.sandbox_id) === bare(id));
    assert.ok(row.storage_mib_seconds >= (snap.body.size_bytes / 1024 / 1024) * 600 - 1e-6);
    assert.ok(afterDelete >= before);
    lifecycleStorage = (await usage()).storage_mib_seconds;
  });

  await t.test('period rollover splits an interval at midnight UTC and freezes the old period', async () => {
    env.clock.advance(Date.UTC(2031, 0, 31, 23, 59, 0) - env.clock.now());
    const id = await create();
    advance(120 * S);
    const periods = (await api.get(`/teams/${team}/billing/periods`)).body.periods;
    assert.equal(periods.length, 2);
    const [feb, jan] = periods;
    assert.equal(feb.status, 'open');
    assert.equal(feb.period_start, '2031-02-01T00:00:00.000Z');
    assert.equal(feb.period_end, '2031-03-01T00:00:00.000Z');
    assert.equal(feb.finalized_at, null);
    assert.equal(jan.status, 'finalized');
    assert.equal(jan.period_end, '2031-02-01T00:00:00.000Z');
    assert.ok(jan.finalized_at);
    for (const p of periods) {
      assert.equal(p.current_period_start, '2031-02-01T00:00:00.000Z');
      assert.equal(p.current_period_end, '2031-03-01T00:00:00.000Z');
      assert.equal(p.cancel_at_period_end, false);
      assert.equal(p.blocked_reason, null);
      for (const k of ['approved_at', 'exported_at', 'payments_customer_id', 'payments_subscription_id', 'payments_subscription_status', 'payments_invoice_status']) {
        assert.equal(p[k], null, k);
      }
    }

    const janUsage = await usage(`?period_id=${jan.period_id}`);
    assert.equal(janUsage.status, 'finalized');
    assert.equal(janUsage.vcpu_seconds, 120 + 60, 'the lifecycle plus the last minute of January');
    assert.equal(janUsage.memory_mib_seconds, (120 + 60) * 1024);
    assert.ok(janUsage.storage_mib_seconds >= lifecycleStorage);
    const febUsage = await usage();
    assert.equal(febUsage.period_id, feb.period_id);
    assert.equal(febUsage.vcpu_seconds, 60, 'the first minute of February');

    // The trial credit was spent in January; February's charges are all invoiced.
    const s = (await api.get('/billing/summary')).body;
    assert.equal(s.billing_period.start, '2031-02-01T00:00:00.000Z');
    assert.equal(s.credits_applied_usd, 0);
    close(s.expected_invoice_amount_usd, s.current_charges_usd, 'invoice');
    assert.ok(s.current_charges_usd >= 60);

    assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
    advance(S);
    const frozen = await usage(`?period_id=${jan.period_id}`);
    assert.equal(frozen.vcpu_seconds, 180, 'a finalized period does not change');
    assertEnvelope(await api.get(`/teams/${team}/billing/usage?period_id=00000000-0000-4000-8000-000000000000`), 404, 'not_found');
    assertEnvelope(await api.get(`/teams/${team}/billing/usage?period_id=nope`), 400, 'bad_request');
  });

  await t.test('a restart in the middle of an active interval neither loses nor double-counts a second', async () => {
    const id = await create();
    advance(100 * S);
    await env.close();
    // The server is down for 50 s; the container keeps running, so those seconds are billed.
    await env.open(new ManualClock(env.clock.now() + 50 * S));
    api = env.api();
    advance(25 * S);
    assert.equal((await api.get(`/sandboxes/${id}`)).body.status, 'active');
    assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
    advance(S);
    const row = (await perSandbox()).sandboxes.find((x: any) => bare(x.sandbox_id) === bare(id));
    assert.equal(row.vcpu_seconds, 175);
    assert.equal(row.memory_mib_seconds, 175 * 1024);
    // A second restart replays nothing.
    await env.close();
    await env.open(new ManualClock(env.clock.now()));
    api = env.api();
    const again = (await perSandbox()).sandboxes.find((x: any) => bare(x.sandbox_id) === bare(id));
    assert.equal(again.vcpu_seconds, 175);
    assert.equal((await usage()).vcpu_seconds, 60 + 175);
  });

  await t.test('permissions and the rollout gate', async () => {
    const noBilling = await api.post('/api-keys', { name: 'no-billing', permissions: ['sandboxes:read'] });
    assert.equal(noBilling.status, 201);
    const limited = env.api(noBilling.body.key);
    assertEnvelope(await limited.get('/billing/summary'), 403, 'forbidden');
    assertEnvelope(await limited.get(`/teams/${team}/billing/usage`), 403, 'forbidden');
    assertEnvelope(await limited.get(`/teams/${team}/billing/periods`), 403, 'forbidden');
    assertEnvelope(await limited.get(`/teams/${team}/billing/usage/sandboxes`), 403, 'forbidden');
    assertEnvelope(await env.api('sp_wrong').get('/billing/summary'), 401, 'unauthorized');
    assertEnvelope(await new Api(env.p.url).get(`/teams/${team}/billing/usage`), 401, 'unauthorized');

    const other = await env.p.auth.createTeam('other');
    for (const path of [`/teams/${other.teamId}/billing/usage`, `/teams/${other.teamId}/billing/periods`, `/teams/${other.teamId}/billing/usage/sandboxes`]) {
      assertEnvelope(await api.get(path), 403, 'forbidden');
    }
    assertEnvelope(await api.get('/teams/00000000-0000-4000-8000-000000000000/billing/usage'), 403, 'forbidden');

    // The operator's CLI acts on the store while the server runs; the next request sees it.
    const gate = (verb: string) => {
      const r = spawnSync(process.execPath, [CLI, 'gate', verb, 'default', 'tenant_usage_dashboard'], {
        env: { ...process.env, SANDPIT_DATA_DIR: env.dataDir, SANDPIT_DATABASE_URL: env.database?.url ?? '' },
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
    };
    gate('disable');
    assertEnvelope(await api.get('/billing/summary'), 403, 'forbidden');
    assert.equal((await api.get(`/teams/${team}/billing/usage`)).status, 200, 'the gate guards only the summary');
    gate('enable');
    assert.equal((await api.get('/billing/summary')).status, 200);
  });

  await t.test('Prometheus metrics: sandboxes by status, API and engine latency', async () => {
    const id = await create();
    const res = await new Api(env.p.url).get('/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = res.body as string;
    assert.match(text, /^sandpit_sandboxes\{status="active"\} 1$/m);
    assert.match(text, /^sandpit_sandboxes\{status="paused"\} 0$/m);
    assert.match(text, /^sandpit_http_request_duration_seconds_count\{method="POST",route="\/sandboxes",status="201"\} 1$/m);
    assert.match(text, /^sandpit_engine_operation_duration_seconds_count\{operation="create",outcome="ok"\} 1$/m);
    assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
  });
});
