import pMap from 'p-map';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import { type RuntimeDriver, TEARDOWN_CONCURRENCY } from '../../runtime/driver.ts';
import type { SandboxRecord, SandboxStore } from '../../store/sandboxes.ts';

/** Engine states read at once: a host may hold 10,000 sandboxes, and each read is a few file lookups. */
const STATE_READS = 16;

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
  const destroy = async (id: string, what: string) => driver.destroy(id).catch((err) => log.error({ sandbox: id, err: String(err) }, `cleanup of ${what} failed`));
  const failed: string[] = [];
  await pMap(
    live,
    async (rec) => {
      // Failed is final: whatever the engine still holds of it goes (a node back after being declared lost).
      if (rec.status === 'failed') {
        if ((await driver.state(rec.id)) !== 'missing') {
          log.warn({ sandbox: rec.id }, 'reconciled: removing engine state of a failed sandbox');
          failed.push(rec.id);
        }
        return;
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
        failed.push(rec.id);
      }
    },
    { concurrency: STATE_READS },
  );
  await pMap(failed, (id) => destroy(id, 'a failed sandbox'), { concurrency: TEARDOWN_CONCURRENCY });
  const orphans = (await driver.list()).filter((id) => !known.has(id));
  await pMap(
    orphans,
    async (id) => {
      // Read again: on a node back from being lost this runs while it is live, and a sandbox created
      // since the list above has its row by now. A copy of a sandbox that lives on another node (a move
      // cut short by a restart, before or after its switch) goes.
      const since = await store.get(id);
      if (since && since.status !== 'failed' && (store.node === null || since.nodeId === store.node)) return;
      log.warn({ sandbox: id }, 'reconciled: removing engine state with no live sandbox');
      await destroy(id, 'an orphan');
    },
    { concurrency: TEARDOWN_CONCURRENCY },
  );
}
