import { createHash } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { RateLimitStore } from '../store/rate-limits.ts';

export interface RateLimitCount {
  current: number;
  /** Milliseconds until the window ends. */
  ttl: number;
}

/** Rows of ended windows are dropped at most this often (by whichever replica gets there). */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * Rate-limit counts in the store, so a limit holds across API replicas (PostgreSQL; with SQLite
 * there is one process and the plugin's memory store is used instead). Keys are API keys, access
 * tokens, session cookies or addresses: only their hash is stored.
 */
export class SharedRateLimits {
  readonly #store: RateLimitStore;
  readonly #clock: Clock;
  #nextSweep = 0;
  #longestWindowMs = 0;

  constructor(store: RateLimitStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  /** Counts one request of `key` under `scope` (each API port counts on its own). */
  async hit(scope: string, key: string, windowMs: number): Promise<RateLimitCount> {
    const now = this.#clock.now();
    this.#longestWindowMs = Math.max(this.#longestWindowMs, windowMs);
    if (now >= this.#nextSweep) {
      this.#nextSweep = now + SWEEP_INTERVAL_MS;
      // A failed sweep is retried at the next interval; the request does not wait for it.
      this.#store.sweep(now - this.#longestWindowMs).catch(() => undefined);
    }
    const digest = createHash('sha256').update(`${scope}\0${key}`).digest('base64url');
    const { hits, windowStart } = await this.#store.hit(digest, now, windowMs);
    return { current: hits, ttl: Math.max(0, windowStart + windowMs - now) };
  }

  /** The store class @fastify/rate-limit constructs (its `store` option), counting under `scope`. */
  pluginStore(scope: string) {
    const limits = this;
    return class SharedRateLimitStore {
      incr(key: string, done: (err: Error | null, res?: RateLimitCount) => void, timeWindow: number): void {
        limits.hit(scope, key, timeWindow).then(
          (res) => done(null, res),
          (err: Error) => done(err),
        );
      }

      child(): SharedRateLimitStore {
        return this;
      }
    };
  }
}
