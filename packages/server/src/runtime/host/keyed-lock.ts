/** Serializes async work per key (one sandbox's transitions never interleave). */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** True while work for `key` runs or waits. */
  busy(key: string): boolean {
    return this.#tails.has(key);
  }

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return next;
  }
}
