import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { systemClock } from '../src/clock.ts';
import { AuthService } from '../src/services/auth.ts';
import { ActiveSlotStore } from '../src/store/active-slots.ts';
import { type LedgerChange, MeterStore } from '../src/store/billing.ts';
import { type Db, openDb } from '../src/store/db.ts';
import { LeaseStore } from '../src/store/leases.ts';
import { TeamStore } from '../src/store/teams.ts';
import { createDatabase, PostgresCluster } from './helpers/postgres.ts';
import { Api, ServerProcess } from './helpers/server-process.ts';

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
  const env = { SANDPIT_DATABASE_URL: database.url, SANDPIT_BOOTSTRAP_API_KEY: key, SANDPIT_DRIVER: 'container', SANDPIT_MAX_ACTIVE_SANDBOXES: '2', SANDPIT_RATE_LIMIT: '0' };
  const started = await Promise.allSettled([ServerProcess.start(env), ServerProcess.start(env)]);
  for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
  const apis = servers.map((s) => new Api(s.url, key));

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
    assert.deepEqual(leases.map((l) => l.name).toSorted(), ['billing', 'timers']);
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
