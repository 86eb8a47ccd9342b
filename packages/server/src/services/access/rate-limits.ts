import { createHash } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { RateLimitStore } from '../../store/rate-limits.ts';

export interface RateLimitAnswer {
  current: number;
  /** Milliseconds until the window ends. */
  ttl: number;
}

interface KeyCount {
  /** What the store knows the key by: a hash, never the API key itself. */
  digest: string;
  windowMs: number;
  /** The key's count across replicas at the last flush, and the start of its window then. */
  stored: number;
  windowStart: number | undefined;
  /** Hits answered here and not yet in `stored`: being flushed, and since. */
  inFlight: number;
  pending: number;
}

/** How often a replica adds its hits to the store and learns the others'. */
const FLUSH_MS = 100;
/** Rows of ended windows are dropped at most this often (by whichever replica gets there). */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * Rate-limit counts shared by API replicas through the store (PostgreSQL; with SQLite there is one
 * process and the plugin's memory store is used instead). A request is answered from memory: the
 * key's count across replicas at the last flush plus this replica's hits since. Every FLUSH_MS each
 * replica adds its hits to the key's row in one statement and reads back the total, so a limit
 * holds across replicas with an overshoot of at most what each replica serves of that key in one
 * flush period, and no store round trip in any request (bench/rate-limit.bench.ts).
 */
export class SharedRateLimits {
  readonly #store: RateLimitStore;
  readonly #clock: Clock;
  readonly #flushMs: number;
  readonly #counts = new Map<string, KeyCount>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #nextSweep = 0;
  #longestWindowMs = 0;

  constructor(store: RateLimitStore, clock: Clock, flushMs = FLUSH_MS) {
    this.#store = store;
    this.#clock = clock;
    this.#flushMs = flushMs;
  }

  /** Counts one request of `key` under `scope` (each API port counts on its own). */
  hit(scope: string, key: string, windowMs: number): RateLimitAnswer {
    const now = this.#clock.now();
    const id = `${scope}\0${key}`;
    let c = this.#counts.get(id);
    if (!c) {
      this.#longestWindowMs = Math.max(this.#longestWindowMs, windowMs);
      c = { digest: createHash('sha256').update(id).digest('base64url'), windowMs, stored: 0, windowStart: undefined, inFlight: 0, pending: 0 };
      this.#counts.set(id, c);
    } else if (c.windowStart !== undefined && c.windowStart + windowMs <= now) {
      c.stored = 0;
      c.windowStart = undefined;
    }
    c.pending++;
    this.#schedule();
    return { current: c.stored + c.inFlight + c.pending, ttl: Math.max(0, (c.windowStart ?? now) + windowMs - now) };
  }

  /** Adds this replica's hits to the store and learns the totals; one flush at a time. */
  flush(): Promise<void> {
    this.#flushing ??= this.#flush().finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  /** Stops the timer and flushes what is left. */
  async close(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush().catch(() => undefined);
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // A failed flush keeps its hits pending and schedules the next try itself.
      this.flush().catch(() => undefined);
    }, this.#flushMs);
    this.#timer.unref();
  }

  async #flush(): Promise<void> {
    const now = this.#clock.now();
    const byWindow = new Map<number, KeyCount[]>();
    for (const [id, c] of this.#counts) {
      if (c.pending === 0) {
        // Idle past its window: a later hit starts from the store's count again.
        if (c.inFlight === 0 && (c.windowStart ?? 0) + c.windowMs <= now) this.#counts.delete(id);
        continue;
      }
      c.inFlight = c.pending;
      c.pending = 0;
      byWindow.set(c.windowMs, [...(byWindow.get(c.windowMs) ?? []), c]);
    }
    if (byWindow.size > 0 && now >= this.#nextSweep) {
      this.#nextSweep = now + SWEEP_INTERVAL_MS;
      this.#store.sweep(now - this.#longestWindowMs).catch(() => undefined);
    }
    let failed: unknown;
    for (const [windowMs, counts] of byWindow) {
      try {
        const rows = await this.#store.add(
          counts.map((c) => ({ key: c.digest, hits: c.inFlight })),
          now,
          windowMs,
        );
        const byDigest = new Map(rows.map((r) => [r.key, r]));
        for (const c of counts) {
          const row = byDigest.get(c.digest)!;
          c.stored = row.hits;
          c.windowStart = row.windowStart;
          c.inFlight = 0;
        }
      } catch (err) {
        for (const c of counts) {
          c.pending += c.inFlight;
          c.inFlight = 0;
        }
        failed ??= err;
      }
    }
    if (failed !== undefined) {
      this.#schedule();
      throw failed;
    }
  }

  /** The store class @fastify/rate-limit constructs (its `store` option), counting under `scope`. */
  pluginStore(scope: string) {
    const limits = this;
    return class SharedRateLimitStore {
      incr(key: string, done: (err: Error | null, res?: RateLimitAnswer) => void, timeWindow: number): void {
        done(null, limits.hit(scope, key, timeWindow));
      }

      child(): SharedRateLimitStore {
        return this;
      }
    };
  }
}
