import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { systemClock } from '../src/clock.ts';
import { AuthService } from '../src/services/access/auth.ts';
import { ActiveSlotStore } from '../src/store/active-slots.ts';
import { type LedgerChange, MeterStore } from '../src/store/billing.ts';
import { type Db, openDb } from '../src/store/db.ts';
import { LeaseStore } from '../src/store/leases.ts';
import { SharedRateLimits } from '../src/services/access/rate-limits.ts';
import { RateLimitStore } from '../src/store/rate-limits.ts';
import { SnapshotReservationStore } from '../src/store/snapshot-reservations.ts';
import { TeamStore } from '../src/store/teams.ts';
import { until } from './helpers/cluster-steps.ts';
import { Internet } from './helpers/internet.ts';
import { createDatabase, PostgresCluster } from './helpers/postgres.ts';
import { Api, freePort, ServerProcess } from './helpers/server-process.ts';
import { Receiver } from './helpers/webhook-receiver.ts';

/* State that API replicas must agree on lives in PostgreSQL; every test here runs two of something against one database. */
let cluster: PostgresCluster;
before(async () => {
  cluster = await PostgresCluster.start();
});
after(() => cluster.stop());

/** Two store handles, each with its own pool, stand for two replicas. */
async function twoHandles(url: string): Promise<[Db, Db]> {
  return [await openDb({ dataDir: cluster.dir, databaseUrl: url }), await openDb({ dataDir: cluster.dir, databaseUrl: url })];
}

test('replica state in the store: leases, slot claims and the metering cursor hold across two handles', async (t) => {
  const database = await createDatabase(cluster.adminUrl);
  const [a, b] = await twoHandles(database.url);
  t.after(async () => {
    await a.destroy();
    await b.destroy();
  });
  await a.insertInto('teams').values({ id: 'team-1', name: 'one', limits: null, created_at: 1 }).execute();

  await t.test('a lease has one holder until it lapses', async () => {
    const [la, lb] = [new LeaseStore(a), new LeaseStore(b)];
    const won = await Promise.all([la.acquire('job', 'replica-a', 1000, 5000), lb.acquire('job', 'replica-b', 1000, 5000)]);
    assert.equal(won.filter(Boolean).length, 1, 'exactly one replica takes a free lease');
    const [holder, other] = won[0] ? ['replica-a', 'replica-b'] : ['replica-b', 'replica-a'];
    assert.equal(await la.acquire('job', holder, 3000, 5000), true, 'the holder renews');
    assert.equal(await lb.acquire('job', other, 7999, 5000), false, 'renewed at 3000, live until 8000');
    assert.equal(await lb.acquire('job', other, 8000, 5000), true, 'a lapsed lease is taken over');
    assert.equal(await la.acquire('job', holder, 8001, 5000), false);
    await lb.release('job', other);
    assert.equal(await la.acquire('job', holder, 8002, 5000), true, 'a released lease is free at once');
  });

  await t.test('concurrent slot claims from both replicas never exceed the cap', async () => {
    const stores = [new ActiveSlotStore(a), new ActiveSlotStore(b)];
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % 2]!.claim(`claim-${i}`, 'team-1', 3, 1000, 60_000)));
    assert.equal(results.filter((r) => r.claimed).length, 3);
    const winner = results.findIndex((r) => r.claimed);
    await stores[0]!.release(`claim-${winner}`, 1000);
    assert.equal((await stores[1]!.claim('late', 'team-1', 3, 1000, 60_000)).claimed, true, 'a released slot is free again');
    assert.equal((await stores[1]!.claim('after-expiry', 'team-1', 3, 61_000, 60_000)).claimed, true, 'claims of a dead replica expire');
  });

  await t.test('concurrent snapshot reservations from both replicas hold the total and in-flight caps', async () => {
    const stores = [new SnapshotReservationStore(a), new SnapshotReservationStore(b)];
    const caps = { max: 5, maxInFlight: 2 };
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => stores[i % 2]!.reserve(`res-${i}`, 'team-1', caps, 1000, 60_000)));
    assert.equal(results.filter((r) => r.reserved).length, 2);
    assert.deepEqual(
      results.find((r) => !r.reserved),
      { reserved: false, cap: 'in_flight', total: 0, inFlight: 2 },
    );
    // A reservation turns into its snapshot row: the row holds the in-flight place from then on.
    const first = results.findIndex((r) => r.reserved);
    const row = { id: 'snap-1', team_id: 'team-1', sandbox_id: 'sb-1', template_id: null, kind: 'mem+fs', status: 'creating', name: null, size_bytes: 0 };
    await a
      .insertInto('snapshots')
      .values({ ...row, resources: '{}', env: '{}', idempotency_key: null, created_at: 1000, ready_at: null, updated_at: 1000, deleted_at: null })
      .execute();
    await stores[0]!.release(`res-${first}`, 1000);
    assert.equal((await stores[1]!.reserve('while-capturing', 'team-1', caps, 1000, 60_000)).reserved, false);
    await a.updateTable('snapshots').set({ status: 'ready' }).where('id', '=', 'snap-1').execute();
    assert.equal((await stores[1]!.reserve('after-capture', 'team-1', caps, 1000, 60_000)).reserved, true);
    assert.deepEqual(await stores[0]!.reserve('over-total', 'team-1', { max: 3, maxInFlight: 10 }, 1000, 60_000), { reserved: false, cap: 'total', total: 1, inFlight: 2 });
    assert.equal((await stores[0]!.reserve('after-expiry', 'team-1', caps, 61_000, 60_000)).reserved, true, 'reservations of a dead replica expire');
  });

  await t.test('rate-limit hits from both replicas count into one window per key', async () => {
    const [ra, rb] = [new RateLimitStore(a), new RateLimitStore(b)];
    const added = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? ra : rb).add(
          [
            { key: 'key-1', hits: 1 },
            { key: `own-${i}`, hits: 2 },
          ],
          5000 + i,
          10_000,
        ),
      ),
    );
    const counts = added.map((rows) => rows.find((r) => r.key === 'key-1')!);
    assert.deepEqual(
      counts.map((h) => h.hits).toSorted((x, y) => x - y),
      Array.from({ length: 20 }, (_, i) => i + 1),
      'every hit counted once',
    );
    const start = counts.find((x) => x.hits === 1)!.windowStart;
    assert.ok(
      counts.every((h) => h.windowStart === start),
      'one window',
    );
    assert.deepEqual(await rb.add([{ key: 'key-1', hits: 3 }], start + 10_000, 10_000), [{ key: 'key-1', hits: 3, windowStart: start + 10_000 }], 'a new window starts afresh');
    await ra.sweep(start + 10_000);
    assert.deepEqual(
      (await a.selectFrom('rate_limits').select('key').execute()).map((r) => r.key),
      ['key-1'],
      'ended windows are swept',
    );
  });

  await t.test("shared rate limits: each replica answers from memory and learns the others' hits at its next flush", async (st) => {
    // A flush period no test run reaches: flushes happen here when the test says.
    const [la, lb] = [a, b].map((db) => new SharedRateLimits(new RateLimitStore(db), systemClock, 3_600_000)) as [SharedRateLimits, SharedRateLimits];
    st.after(() => Promise.all([la.close(), lb.close()]));
    for (let i = 1; i <= 15; i++) assert.equal(la.hit('api', 'k', 60_000).current, i);
    await la.flush();
    assert.equal(lb.hit('api', 'k', 60_000).current, 1, 'not flushed yet: only its own hit');
    await lb.flush();
    assert.equal(lb.hit('api', 'k', 60_000).current, 17, "after its flush: replica a's 15 and its own");
    assert.equal(lb.hit('api', 'other', 60_000).current, 1, 'keys count apart');
    assert.equal(la.hit('e2b', 'k', 60_000).current, 1, 'scopes count apart');
    assert.equal(la.hit('api', 'k', 60_000).current, 16, 'a replica that has not flushed since is one period behind');
    // In turn, so replica a reads the total after both have added: 15 + 1 (a) + 2 (b).
    await lb.flush();
    await la.flush();
    assert.equal(la.hit('api', 'k', 60_000).current, 19);
  });

  await t.test('a metering batch is applied by exactly one replica', async () => {
    const [ma, mb] = [new MeterStore(a), new MeterStore(b)];
    const open: LedgerChange = { kind: 'open', teamId: 'team-1', subjectKind: 'sandbox', subjectId: 'sb-1', resource: 'vcpu', quantity: 2, at: 1000 };
    const close: LedgerChange = { kind: 'close', subjectId: 'sb-1', resources: ['vcpu'], at: 2000 };
    const applied = await Promise.all([ma.apply([open], 1, 1), mb.apply([open], 1, 1)]);
    assert.deepEqual(applied.toSorted(), [false, true]);
    assert.equal(await ma.apply([close], 2, 2), true);
    // A replica that read the log before the close was metered must not reopen the closed interval.
    assert.equal(await mb.apply([open], 1, 1), false);
    const segments = await a.selectFrom('meter_segments').select(['start_at', 'end_at', 'quantity']).where('subject_id', '=', 'sb-1').execute();
    assert.deepEqual(segments, [{ start_at: 1000, end_at: 2000, quantity: 2 }]);
  });
});

/* Sandboxes still run on the engine of the process that created them (nodes come later), so each is deleted through its creator. */
test('two API processes on one PostgreSQL: the active cap, metering and a store restart', async (t) => {
  const database = await createDatabase(cluster.adminUrl);
  const key = `sp_test_${randomBytes(12).toString('hex')}`;
  // The team exists before either replica starts, so both start at once and neither creates it.
  const seed = await openDb({ dataDir: cluster.dir, databaseUrl: database.url });
  await new AuthService(new TeamStore(seed), systemClock).createTeam('default', { key });
  const servers: ServerProcess[] = [];
  const made: { api: Api; id: string }[] = [];
  // One hook, so the order holds: sandboxes through their creators, then the replicas.
  t.after(async () => {
    for (const m of made) await m.api.del(`/sandboxes/${m.id}`);
    for (const s of servers) await s.stop();
    await seed.destroy();
  });
  // A webhook receiver both replicas may deliver to: deliveries must come from one of them, once each.
  const receiver = await Receiver.start();
  t.after(() => receiver.close());
  const env = {
    SANDPIT_DATABASE_URL: database.url,
    SANDPIT_BOOTSTRAP_API_KEY: key,
    SANDPIT_DRIVER: 'container',
    SANDPIT_MAX_ACTIVE_SANDBOXES: '2',
    SANDPIT_RATE_LIMIT: '0',
    SANDPIT_WEBHOOK_ALLOW_HOSTS: receiver.hostPort,
    // Replicas share the key secrets (and webhook signing secrets) are sealed with.
    SANDPIT_SECRETS_KEY: randomBytes(32).toString('hex'),
  };
  const started = await Promise.allSettled([ServerProcess.start(env), ServerProcess.start(env)]);
  for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
  const apis = servers.map((s) => new Api(s.url, key));

  await t.test('a webhook registered through one replica', async () => {
    assert.equal((await apis[1]!.post('/webhooks', { url: receiver.url, events: ['sandbox.created'] })).status, 201);
  });

  await t.test('four concurrent creates through both replicas: two succeed, two answer 429', async () => {
    const res = await Promise.all([0, 1, 2, 3].map((i) => apis[i % 2]!.post('/sandboxes', {})));
    res.forEach((r, i) => r.status === 201 && made.push({ api: apis[i % 2]!, id: r.body.id }));
    assert.deepEqual(res.map((r) => r.status).toSorted(), [201, 201, 429, 429], JSON.stringify(res.map((r) => r.body)));
    for (const r of res.filter((x) => x.status === 429)) assert.equal(r.body.error.code, 'too_many_sandboxes');
  });

  await t.test('each replica lists and reads the sandboxes the other created', async () => {
    for (const api of apis) {
      const list = await api.get('/sandboxes');
      assert.deepEqual(list.body.sandboxes.map((s: { id: string }) => s.id).toSorted(), made.map((m) => m.id).toSorted());
      for (const m of made) assert.equal((await api.get(`/sandboxes/${m.id}`)).body.status, 'active');
    }
  });

  await t.test('the billing job meters each lifecycle event once across both replicas; each job has one lease holder', async () => {
    const lastSeq = Number(
      (
        await seed
          .selectFrom('sandbox_events')
          .select((eb) => eb.fn.max('seq').as('s'))
          .executeTakeFirstOrThrow()
      ).s,
    );
    for (;;) {
      const cursor = await seed.selectFrom('meter_cursors').select('seq').executeTakeFirst();
      if (cursor && cursor.seq >= lastSeq) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const segments = await seed.selectFrom('meter_segments').select('subject_id').where('resource', '=', 'vcpu').execute();
    assert.deepEqual(segments.map((s) => s.subject_id).toSorted(), made.map((m) => m.id.replace(/^sb-local-/, '')).toSorted());
    const leases = await seed.selectFrom('leases').select('name').execute();
    assert.deepEqual(leases.map((l) => l.name).toSorted(), ['audit-retention', 'billing', 'timers', 'webhooks']);
  });

  await t.test('the creates made through both replicas are delivered once each, by the replica holding the webhooks lease', async () => {
    await until('the deliveries', async () => receiver.received.length >= made.length);
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual(receiver.received.map((r) => r.json.data.id).toSorted(), made.map((m) => m.id).toSorted());
    assert.equal(new Set(receiver.received.map((r) => r.json.id)).size, made.length);
    const holders = await seed.selectFrom('leases').select('holder').where('name', '=', 'webhooks').execute();
    assert.equal(holders.length, 1);
  });

  await t.test('PostgreSQL restarting: both replicas answer 503 unavailable meanwhile and recover by themselves', async () => {
    await cluster.halt();
    try {
      for (const api of apis) {
        const res = await api.get('/sandboxes');
        assert.equal(res.status, 503, `${JSON.stringify(res.body)}\n${servers.map((s) => s.output).join('\n')}`);
        assert.equal(res.body.error.code, 'unavailable');
      }
    } finally {
      await cluster.resume();
    }
    for (const api of apis) {
      // The first request after the restart may still meet a connection the restart cut.
      let res = await api.get('/sandboxes');
      for (let i = 0; i < 20 && res.status === 503; i++) res = await api.get('/sandboxes');
      assert.equal(res.status, 200, `${JSON.stringify(res.body)}\n${servers.map((s) => s.output).join('\n')}`);
      assert.equal(res.body.sandboxes.length, made.length);
    }
  });
});

/* The sandbox runs on the replica that created it; the other replica only answers API calls about it. */
test('two API processes on one PostgreSQL: shared rate limits on both ports, and a revocation reaching the other egress proxy', async (t) => {
  const database = await createDatabase(cluster.adminUrl);
  const key = `sp_test_${randomBytes(12).toString('hex')}`;
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-replicas-'));
  const inet = await Internet.start(dir);
  const servers: ServerProcess[] = [];
  let made: { api: Api; id: string } | undefined;
  t.after(async () => {
    if (made) await made.api.del(`/sandboxes/${made.id}`);
    for (const s of servers) await s.stop();
    inet.stop();
    await rm(dir, { recursive: true, force: true });
    await database.drop();
  });
  const seed = await openDb({ dataDir: cluster.dir, databaseUrl: database.url });
  await new AuthService(new TeamStore(seed), systemClock).createTeam('default', { key });
  await seed.destroy();
  const env = {
    SANDPIT_DATABASE_URL: database.url,
    SANDPIT_BOOTSTRAP_API_KEY: key,
    SANDPIT_DRIVER: 'container',
    // Secrets are created on one replica and decrypted on the other.
    SANDPIT_SECRETS_KEY: randomBytes(32).toString('hex'),
    SANDPIT_DNS_UPSTREAM: `${inet.dns}:53`,
    SANDPIT_EGRESS_UPSTREAM_CA: inet.caFile,
    SANDPIT_RATE_LIMIT: '30',
    SANDPIT_RATE_LIMIT_WINDOW_MS: '600000',
  };
  const e2bPorts = [await freePort(), await freePort()];
  const started = await Promise.allSettled(e2bPorts.map((p) => ServerProcess.start({ ...env, SANDPIT_E2B_PORT: String(p) })));
  for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
  const [a, b] = servers.map((s) => new Api(s.url, key)) as [Api, Api];

  await t.test('a key gets 30 requests per window across both replicas (15 on each), on each port apart', async () => {
    const made = await a.post('/api-keys', { name: 'limited' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    // Longer than a replica's flush period (100 ms): what one replica served is then known to the other.
    const flushed = () => new Promise((r) => setTimeout(r, 300));
    const ports = [
      { bases: servers.map((s) => s.url), code: (body: any) => body.error.code, refused: 'rate_limited' },
      { bases: e2bPorts.map((p) => `http://127.0.0.1:${p}`), code: (body: any) => body.code, refused: 429 },
    ];
    for (const port of ports) {
      const limited = port.bases.map((base) => new Api(base, made.body.key));
      for (const api of limited) {
        const statuses = [];
        for (let i = 0; i < 15; i++) statuses.push((await api.get('/sandboxes')).status);
        assert.deepEqual(statuses, Array(15).fill(200));
        await flushed();
      }
      // Replica a last flushed before b's 15: its next answer may still let one through, then it knows.
      for (const api of limited) {
        await api.get('/sandboxes');
        await flushed();
        const res = await api.get('/sandboxes');
        assert.equal(res.status, 429, JSON.stringify(res.body));
        assert.equal(port.code(res.body), port.refused);
      }
    }
  });

  await t.test('a key revoked or a role taken through one replica: refused there at once, by the other within a second', async () => {
    const made = await a.post('/api-keys', { name: 'revoked' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const [onA, onB] = servers.map((s) => new Api(s.url, made.body.key)) as [Api, Api];
    // Both replicas have now cached the key's principal.
    for (const api of [onA, onB]) assert.equal((await api.get('/sandboxes')).status, 200);
    assert.equal((await a.del(`/api-keys/${made.body.id}`)).status, 204);
    assert.equal((await onA.get('/sandboxes')).status, 401);
    await until('replica b to refuse the revoked key', async () => (await onB.get('/sandboxes')).status === 401, 1000);

    const team = (await a.get('/me')).body.team_id;
    const invited = await a.post(`/teams/${team}/members`, { email: 'replica-member@example.com', full_name: 'A member', role: 'member' });
    assert.equal(invited.status, 201, JSON.stringify(invited.body));
    const member = new Api(servers[1]!.url, invited.body.api_key.key);
    assert.equal((await member.get('/sandboxes')).status, 200);
    assert.equal((await a.del(`/teams/${team}/members/${invited.body.member.user_id}/roles/member`)).status, 204);
    await until('replica b to apply the role revoked through a', async () => (await member.get('/sandboxes')).status === 403, 1000);
  });

  await t.test('a secret revoked through one replica stops being swapped by the other replica within a second', async () => {
    assert.equal((await a.post('/secrets', { name: 'gh', value: 'REAL-replica-value' })).status, 201);
    const created = await b.post('/sandboxes', { secrets: { GH_TOKEN: 'gh' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    made = { api: b, id: created.body.id };
    const curl = async () => {
      const res = await b.post(`/sandboxes/${created.body.id}/exec`, { command: `curl -sS -m 4 -H "Authorization: Bearer $GH_TOKEN" http://api.example.test/echo`, timeout_s: 20 });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return JSON.parse(res.body.stdout);
    };
    assert.equal((await curl()).headers.authorization, 'Bearer REAL-replica-value');
    assert.equal((await a.del('/secrets/gh')).status, 204);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal((await curl()).error.code, 'secret_revoked');
    for (const api of [a, b]) assert.deepEqual((await api.get(`/sandboxes/${created.body.id}`)).body.secrets, [{ env: 'GH_TOKEN', secret: 'gh', revoked: true }]);
  });
});
