import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../src/clock.ts';
import { createLogger } from '../src/logger.ts';
import type { EngineStats } from '../src/runtime/driver.ts';
import { SandboxMetrics } from '../src/services/sandboxes/sandbox-metrics.ts';
import type { SandboxRecord } from '../src/store/sandboxes.ts';

/** The sampler over a fake engine: rates from consecutive samples only, gaps while paused, a bounded window. */
test('sandbox metrics: rates, gaps and the window', async () => {
  const clock = new ManualClock(1_000_000);
  let status = 'active';
  const engine: EngineStats = { memoryBytes: 64 << 20, cpuUsageNs: 0, diskBytes: 4096 };
  const net = { rxBytes: 0, txBytes: 0 };
  const m = new SandboxMetrics({
    liveSandboxes: async () => [{ id: 'a', status } as SandboxRecord],
    driver: { stats: async () => ({ ...engine }) },
    traffic: async () => ({ ...net }),
    clock,
    log: createLogger('silent'),
    intervalMs: 1000,
    windowMs: 5000,
  });
  await m.sample();
  assert.equal(m.series('a')[0]!.cpuPercent, null, 'no rate without a previous sample');

  clock.advance(1000);
  engine.cpuUsageNs += 500_000_000; // half a CPU for one second
  net.rxBytes += 2048;
  net.txBytes += 1024;
  await m.sample();
  const p = m.series('a')[1]!;
  assert.equal(p.cpuPercent, 50);
  assert.equal(p.netRxRate, 2048);
  assert.equal(p.netTxRate, 1024);
  assert.equal(p.memoryBytes, 64 << 20);

  status = 'paused';
  clock.advance(1000);
  await m.sample();
  assert.equal(m.series('a').length, 2, 'a paused sandbox is not sampled');

  status = 'active';
  clock.advance(4000);
  engine.cpuUsageNs = 1000; // a restore restarts the counters
  await m.sample();
  const after = m.series('a');
  assert.equal(after.at(-1)!.cpuPercent, null, 'no rate across a gap');
  assert.ok(
    after.every((pt) => pt.at >= clock.now() - 5000),
    'points older than the window are dropped',
  );
  assert.deepEqual(m.series('a', clock.now()).length, 1);
});

test('sandbox metrics: deleted sandboxes are forgotten, a stuck engine read is skipped', async () => {
  const clock = new ManualClock(0);
  let live = ['a', 'b'];
  const m = new SandboxMetrics({
    liveSandboxes: async () => live.map((id) => ({ id, status: 'active' }) as SandboxRecord),
    driver: { stats: async (id) => (id === 'b' ? new Promise<EngineStats>(() => undefined) : { memoryBytes: 1, cpuUsageNs: 1, diskBytes: 1 }) },
    traffic: async () => undefined,
    clock,
    log: createLogger('silent'),
    intervalMs: 1000,
    windowMs: 60_000,
  });
  await m.sample();
  assert.equal(m.series('a').length, 1);
  assert.equal(m.series('a')[0]!.netRxBytes, null, 'no veth: no network numbers');
  assert.equal(m.series('b').length, 0);
  live = [];
  await m.sample();
  assert.equal(m.series('a').length, 0);
});
