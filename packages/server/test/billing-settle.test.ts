import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { ManualClock } from '../src/clock.ts';
import type { EngineStats } from '../src/runtime/driver.ts';
import { BillingService } from '../src/services/billing/billing-service.ts';
import { MeteringService } from '../src/services/billing/metering.ts';
import { BillingStore, MeterStore } from '../src/store/billing.ts';
import { openDb } from '../src/store/db.ts';
import { SandboxStore } from '../src/store/sandboxes.ts';
import { sandboxRecord } from './helpers/sandbox-record.ts';

const S = 1000;

const sandbox = (id: string, at: number) => sandboxRecord(id, { resources: { vcpu_count: 1, memory_mib: 1024, disk_mib: 1024 }, activeSince: at, createdAt: at, updatedAt: at });

test('a period is frozen only with every event committed before the settle metered: a job mid-sync at midnight does not drop a late create', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-billing-settle-'));
  const db = await openDb({ dataDir: dir });
  t.after(async () => {
    await db.destroy();
    await rm(dir, { recursive: true, force: true });
  });
  await db.insertInto('teams').values({ id: 'team-1', name: 'one', limits: null, created_at: 1 }).execute();
  const clock = new ManualClock(Date.UTC(2031, 0, 10, 12, 0, 0));
  // A disk sample can wait on the engine for seconds; here it waits while `held` is set, until the test releases it.
  let held: Promise<void> | undefined;
  let release: () => void = () => undefined;
  const sampled: string[] = [];
  const driver = {
    stats: async (id: string): Promise<EngineStats> => {
      sampled.push(id);
      await held;
      return { diskBytes: 0 } as EngineStats;
    },
  };
  const metering = new MeteringService({ store: new MeterStore(db), driver, clock, log: pino({ level: 'silent' }), sampleIntervalMs: 60 * S });
  const billing = new BillingService({ store: new BillingStore(db), metering, gates: {} as never, teams: {} as never, clock });
  const sandboxes = new SandboxStore(db);

  const opened = clock.now();
  await sandboxes.insert(sandbox('old', opened), 'created');
  await billing.runJob();

  // A minute before midnight the periodic job has drained the log and waits on a disk sample; meanwhile a
  // sandbox is created and midnight passes before the job settles.
  clock.advance(Date.UTC(2031, 0, 31, 23, 59, 0) - clock.now());
  held = new Promise<void>((r) => (release = r));
  sampled.length = 0;
  const job = billing.runJob();
  while (sampled.length === 0) await new Promise((r) => setImmediate(r));
  await sandboxes.insert(sandbox('late', clock.now()), 'created');
  clock.advance(120 * S);
  release();
  await job;
  await billing.runJob();

  const periods = await new BillingStore(db).periods('team-1');
  const jan = periods.find((p) => p.status === 'finalized');
  assert.ok(jan, 'January is finalized');
  const oldJanuary = (Date.UTC(2031, 1, 1) - opened) / S;
  assert.equal(jan.totals?.vcpuSeconds, oldJanuary + 60, "January holds the late sandbox's last minute of the month");
  assert.equal(periods.find((p) => p.status === 'open')?.start, Date.UTC(2031, 1, 1), 'February is open');
});
