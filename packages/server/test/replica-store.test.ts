import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ActiveSlotStore } from '../src/store/active-slots.ts';
import { type LedgerChange, MeterStore } from '../src/store/billing.ts';
import { type Db, openDb } from '../src/store/db.ts';
import { LeaseStore } from '../src/store/leases.ts';
import { createDatabase, PostgresCluster } from './helpers/postgres.ts';

/* Two store handles on one PostgreSQL database stand for two API replicas (each has its own pool). */
test('replica state in PostgreSQL: leases, slot claims and the metering cursor hold across two handles', async (t) => {
  const cluster = await PostgresCluster.start();
  t.after(() => cluster.stop());
  const database = await createDatabase(cluster.adminUrl);
  const a: Db = await openDb({ dataDir: cluster.dir, databaseUrl: database.url });
  const b: Db = await openDb({ dataDir: cluster.dir, databaseUrl: database.url });
  t.after(async () => {
    await a.destroy();
    await b.destroy();
  });
  await a.insertInto('teams').values({ id: 'team-1', name: 'one', limits: null, created_at: 1 }).execute();

  await t.test('a lease has one holder until it lapses', async () => {
    const [la, lb] = [new LeaseStore(a), new LeaseStore(b)];
    const won = await Promise.all([la.acquire('timers', 'replica-a', 1000, 5000), lb.acquire('timers', 'replica-b', 1000, 5000)]);
    assert.equal(won.filter(Boolean).length, 1, 'exactly one replica takes a free lease');
    const [holder, other] = won[0] ? ['replica-a', 'replica-b'] : ['replica-b', 'replica-a'];
    assert.equal(await la.acquire('timers', holder, 3000, 5000), true, 'the holder renews');
    assert.equal(await lb.acquire('timers', other, 7999, 5000), false, 'renewed at 3000, live until 8000');
    assert.equal(await lb.acquire('timers', other, 8000, 5000), true, 'a lapsed lease is taken over');
    assert.equal(await la.acquire('timers', holder, 8001, 5000), false);
    await lb.release('timers', other);
    assert.equal(await la.acquire('timers', holder, 8002, 5000), true, 'a released lease is free at once');
  });

  await t.test('concurrent slot claims from both replicas never exceed the cap', async () => {
    const stores = [new ActiveSlotStore(a), new ActiveSlotStore(b)];
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % 2]!.claim(`claim-${i}`, 'team-1', 3, 1000, 60_000)));
    assert.equal(results.filter((r) => r.claimed).length, 3);
    const winner = results.findIndex((r) => r.claimed);
    await stores[0]!.release(`claim-${winner}`, 1000);
    assert.equal((await stores[1]!.claim('late', 'team-1', 3, 1000, 60_000)).claimed, true, 'a released slot is free again');
    assert.equal((await stores[1]!.claim('expired-others', 'team-1', 3, 61_000, 60_000)).claimed, true, 'claims of a dead replica expire');
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
