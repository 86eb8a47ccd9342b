import type { SandboxRecord } from '../../store/sandboxes.ts';
import { markPaused } from './sandbox-rules.ts';
import type { SandboxService } from './sandboxes.ts';

/**
 * A running sandbox's steps of a move between nodes, on the sandbox service's own engine and store: the
 * source checkpoints it (`migrating`), and either the target resumes it as its new node or the source
 * resumes it where it was. Billing sees no pause: `migrating` counts as active, and no compute-closing
 * event is written unless it ends paused. The caller holds the sandbox's lock on its node.
 */
export class LiveMoveSteps {
  readonly #s: SandboxService;

  constructor(sandboxes: SandboxService) {
    this.#s = sandboxes;
  }

  /** On the source: `migrating`, then checkpointed as a pause does (connections cut); it keeps running where it was if the save is refused. */
  async checkpoint(rec: SandboxRecord, to: string): Promise<void> {
    const { store, driver, clock, agents } = this.#s.deps;
    rec.status = 'migrating';
    rec.updatedAt = clock.now();
    await store.save(rec, { type: 'migrating', at: rec.updatedAt, data: { from: rec.nodeId, to } });
    this.#s.closePlatformConnections(rec.id);
    await this.#s.captureOrSettle(
      rec,
      () => driver.pause(rec.id),
      (err) => this.#back(rec, 'migrate_failed', { to, message: err.message }),
    );
    agents.drop(rec.id);
  }

  /** On the source, after a copy that did not take: the sandbox runs on here from its checkpoint. */
  async resumeHere(rec: SandboxRecord, to: string, why: string): Promise<void> {
    await this.#resume(rec);
    await this.#back(rec, 'migrate_failed', { to, message: why });
  }

  /** On the target, once the store names it the sandbox's node: resumed from the copied checkpoint. */
  async resumeMoved(rec: SandboxRecord, from: string): Promise<void> {
    await this.#resume(rec);
    await this.#back(rec, 'migrated', { from, to: rec.nodeId });
  }

  /** A checkpoint the engine cannot resume leaves the sandbox paused, which is what the engine then holds. */
  async #resume(rec: SandboxRecord): Promise<void> {
    const { store, driver, clock } = this.#s.deps;
    try {
      await driver.resume(rec.id);
    } catch (err) {
      markPaused(rec, clock.now());
      await store.save(rec, { type: 'paused', at: rec.updatedAt, data: { during: 'migrate' } });
      throw err;
    }
  }

  async #back(rec: SandboxRecord, type: string, data: Record<string, unknown>): Promise<void> {
    rec.status = 'active';
    rec.updatedAt = this.#s.deps.clock.now();
    await this.#s.deps.store.save(rec, { type, at: rec.updatedAt, data });
  }
}
