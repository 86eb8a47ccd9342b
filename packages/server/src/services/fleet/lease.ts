import type { Clock } from '../../clock.ts';
import type { LeaseStore } from '../../store/leases.ts';

/**
 * A periodic job that runs on one API replica at a time: the one holding the named lease in the
 * store. The holder renews it on every run; another replica takes over once it lapses.
 */
export class Lease {
  readonly #store: LeaseStore;
  readonly #name: string;
  readonly #holder: string;
  readonly #clock: Clock;
  readonly #ttlMs: number;

  constructor(store: LeaseStore, name: string, holder: string, clock: Clock, ttlMs: number) {
    this.#store = store;
    this.#name = name;
    this.#holder = holder;
    this.#clock = clock;
    this.#ttlMs = ttlMs;
  }

  /** Takes or renews the lease; true when this replica should run the job now. */
  held(): Promise<boolean> {
    return this.#store.acquire(this.#name, this.#holder, this.#clock.now(), this.#ttlMs);
  }

  release(): Promise<void> {
    return this.#store.release(this.#name, this.#holder);
  }
}
