import type { Principal } from './principal.ts';

export interface CachedPrincipal {
  principal: Principal;
  /** Clock time the principal stops being valid (a console session's expiry); Infinity for keys. */
  endsAt: number;
}

/** Principals kept per replica; beyond this the oldest goes (keys are few, sessions come and go). */
const MAX_ENTRIES = 10_000;

/**
 * Principals by key or session hash, so a request with a known key costs no store query. Every
 * change that narrows what a key may do bumps the store's auth epoch; `sync` (run on a timer) reads
 * it and drops everything when it moved, and the replica that made a change calls `invalidate` at
 * once. Entries are served only while the last successful `sync` began at most `staleAfterMs` ago:
 * a request that finds it older (the timer ran late on a busy event loop) syncs first, so a late
 * timer costs one epoch read, not a key lookup per request, and a store that cannot be read is never
 * answered for from memory.
 */
export class PrincipalCache {
  readonly #readEpoch: () => Promise<number>;
  readonly #staleAfterMs: number;
  readonly #entries = new Map<string, CachedPrincipal>();
  /** Loads in flight, shared by concurrent requests with the same key. */
  readonly #loading = new Map<string, Promise<CachedPrincipal | undefined>>();
  /** Grows with every invalidation: a load that began before one is not stored. */
  #generation = 0;
  #epoch: number | undefined;
  /** performance.now() when the last successful epoch read began. */
  #checkedAt = Number.NEGATIVE_INFINITY;
  #syncing: Promise<void> | undefined;

  constructor(readEpoch: () => Promise<number>, staleAfterMs: number) {
    this.#readEpoch = readEpoch;
    this.#staleAfterMs = staleAfterMs;
  }

  /** The principal for `id` at clock time `now`, from the cache or from `load` (undefined: no such live key). */
  async get(id: string, now: number, load: () => Promise<CachedPrincipal | undefined>): Promise<Principal | undefined> {
    if (!this.#fresh()) await this.sync().catch(() => undefined);
    const hit = this.#fresh() ? this.#entries.get(id) : undefined;
    if (hit && hit.endsAt > now) return hit.principal;
    let pending = this.#loading.get(id);
    if (!pending) {
      const generation = this.#generation;
      const loading = load()
        .then((entry) => {
          if (entry && generation === this.#generation) this.#put(id, entry);
          return entry;
        })
        .finally(() => {
          if (this.#loading.get(id) === loading) this.#loading.delete(id);
        });
      this.#loading.set(id, loading);
      pending = loading;
    }
    const entry = await pending;
    return entry && entry.endsAt > now ? entry.principal : undefined;
  }

  /** Drops every cached principal and every load in flight (a change was just committed). */
  invalidate(): void {
    this.#generation++;
    this.#entries.clear();
    this.#loading.clear();
  }

  /** Reads the store's auth epoch; a change there (made by any replica) invalidates the cache. */
  sync(): Promise<void> {
    this.#syncing ??= this.#sync().finally(() => (this.#syncing = undefined));
    return this.#syncing;
  }

  async #sync(): Promise<void> {
    const started = performance.now();
    const epoch = await this.#readEpoch();
    if (epoch !== this.#epoch) {
      this.invalidate();
      this.#epoch = epoch;
    }
    this.#checkedAt = started;
  }

  #fresh(): boolean {
    return performance.now() - this.#checkedAt <= this.#staleAfterMs;
  }

  #put(id: string, entry: CachedPrincipal): void {
    if (this.#entries.size >= MAX_ENTRIES && !this.#entries.has(id)) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(id, entry);
  }
}
