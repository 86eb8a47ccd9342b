import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { RuntimeDriver } from '../../runtime/driver.ts';
import type { SandboxStore } from '../../store/sandboxes.ts';
import type { AgentPool } from '../../runtime/agent-pool.ts';
import type { KeyedLock } from '../../runtime/host/keyed-lock.ts';

/** How often the engines of active sandboxes are looked at: a dead one is noticed within this. */
export const ENGINE_WATCH_INTERVAL_MS = 2_000;

interface EngineWatchDeps {
  store: SandboxStore;
  driver: RuntimeDriver;
  agents: AgentPool;
  /** The sandbox state machine's lock: a transition under way is never second-guessed. */
  lock: KeyedLock;
  clock: Clock;
  log: Logger;
}

/**
 * Notices an engine that died under an active sandbox (its OOM, a killed sentry, gofer or container
 * init) and records the sandbox `failed` with the reason: metering closes on that event, and every
 * operation answers 409 with the reason instead of waiting on an agent that will never answer.
 */
export class EngineWatch {
  readonly #deps: EngineWatchDeps;
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;

  constructor(deps: EngineWatchDeps) {
    this.#deps = deps;
  }

  start(intervalMs = ENGINE_WATCH_INTERVAL_MS): void {
    if (!this.#deps.driver.health) return;
    this.#timer = setInterval(() => {
      this.#sweeping ??= this.sweep()
        .catch((err) => this.#deps.log.error({ err: String(err) }, 'engine watch failed'))
        .finally(() => (this.#sweeping = undefined));
    }, intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sweeping;
  }

  /** One look at every active sandbox's engine; a signal 0 each while they live. */
  async sweep(): Promise<void> {
    const { store, driver, lock } = this.#deps;
    for (const id of await store.activeIds()) {
      if (lock.busy(id)) continue;
      const health = await driver.health!(id);
      if (health === 'exited' || health === 'out_of_memory') await lock.run(id, () => this.#fail(id));
    }
  }

  async #fail(id: string): Promise<void> {
    const { store, driver, agents, clock, log } = this.#deps;
    const rec = await store.get(id);
    // Looked at again under the lock, with the engine's own word: a pause may have ended the run meanwhile.
    if (rec?.status !== 'active') return;
    const health = await driver.health!(id);
    if (health === 'alive' || health === 'unknown') return;
    const state = await driver.state(id);
    if (state === 'running' || state === 'paused') return;
    const reason = health === 'out_of_memory' ? 'engine_out_of_memory' : 'engine_exited';
    const now = clock.now();
    rec.status = 'failed';
    rec.failureReason = reason;
    rec.activeSince = null;
    rec.autoPauseAt = null;
    rec.updatedAt = now;
    await store.save(rec, { type: 'failed', at: now, data: { reason } });
    log.warn({ sandbox: id, reason }, 'the engine of an active sandbox died; the sandbox is failed');
    agents.drop(id);
    await driver.destroy(id).catch((err) => log.error({ sandbox: id, err: String(err) }, 'cleanup of a failed sandbox failed'));
  }
}
