import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { RuntimeDriver } from '../../runtime/driver.ts';
import type { SandboxRecord, SandboxStore } from '../../store/sandboxes.ts';

/**
 * After a restart the engine is the truth about processes and the store about what should exist:
 * - engine running  -> the sandbox is active (a pause or resume cut short is settled as active);
 * - engine frozen   -> the sandbox is paused (its auto-delete window is armed from now);
 * - engine has nothing (host rebooted, init died) -> failed: its processes and memory are gone;
 * - engine state without a live row here (a create or delete cut short, a move's other copy) -> destroyed;
 * - a failed sandbox's engine state (its node was declared lost meanwhile) -> destroyed: the store's view wins.
 */
export async function reconcile(store: SandboxStore, driver: RuntimeDriver, clock: Clock, log: Logger): Promise<void> {
  const live = (await store.listLive()).filter((r) => (driver.serves ? driver.serves(r.driver) : r.driver === driver.name));
  const known = new Set(live.map((r) => r.id));
  for (const rec of live) {
    // Failed is final: whatever the engine still holds of it goes (a node back after being declared lost).
    if (rec.status === 'failed') {
      if ((await driver.state(rec.id)) !== 'missing') {
        log.warn({ sandbox: rec.id }, 'reconciled: removing engine state of a failed sandbox');
        await driver.destroy(rec.id).catch((err) => log.error({ sandbox: rec.id, err: String(err) }, 'cleanup of a failed sandbox failed'));
      }
      continue;
    }
    const state = await driver.state(rec.id);
    const now = clock.now();
    const settle = async (type: string, change: (r: SandboxRecord) => void, data?: unknown) => {
      change(rec);
      rec.updatedAt = now;
      await store.save(rec, { type, at: now, data });
      log.warn({ sandbox: rec.id, status: rec.status }, `reconciled: ${type}`);
    };
    if (state === 'running' && rec.status !== 'active') {
      await settle('reconciled_active', (r) => {
        r.status = 'active';
        r.pausedDiskOnly = false;
        r.activeSince = now;
        r.pausedAt = null;
        r.autoDeleteAt = null;
        r.autoPauseAt = r.autoPauseSeconds === null ? null : now + r.autoPauseSeconds * 1000;
      });
    } else if (state === 'paused' && rec.status !== 'paused') {
      await settle('reconciled_paused', (r) => {
        r.status = 'paused';
        r.pausedAt = now;
        r.activeSince = null;
        r.autoPauseAt = null;
        r.autoDeleteAt = r.autoDeleteSeconds === null ? null : now + r.autoDeleteSeconds * 1000;
      });
    } else if (state === 'stopped' || state === 'missing') {
      await settle(
        'failed',
        (r) => {
          r.status = 'failed';
          r.failureReason = 'engine_lost';
          r.activeSince = null;
          r.autoPauseAt = null;
          r.autoDeleteAt = null;
        },
        { reason: 'engine_lost' },
      );
      await driver.destroy(rec.id).catch((err) => log.error({ sandbox: rec.id, err: String(err) }, 'cleanup of a failed sandbox failed'));
    }
  }
  for (const id of await driver.list()) {
    if (known.has(id)) continue;
    // Read again: on a node back from being lost this runs while it is live, and a sandbox created
    // since the list above has its row by now. A copy of a sandbox that lives on another node (a move
    // cut short by a restart, before or after its switch) goes.
    const since = await store.get(id);
    if (since && since.status !== 'failed' && (store.node === null || since.nodeId === store.node)) continue;
    log.warn({ sandbox: id }, 'reconciled: removing engine state with no live sandbox');
    await driver.destroy(id).catch((err) => log.error({ sandbox: id, err: String(err) }, 'cleanup of an orphan failed'));
  }
}
