/** Failed logins an address may make before every login from it is refused, until it has made none for a window. */
export const FAILED_LOGINS_PER_WINDOW = 100;
export const THROTTLE_WINDOW_MS = 60_000;
/** Addresses tracked at once; past this the oldest windows are forgotten (memory stays bounded under a spray). */
const MAX_ADDRESSES = 100_000;

/** Per-address failed-login counts; a count is forgotten once the address has been quiet for a window (a steady spray never resets it). */
export class LoginThrottle {
  readonly #now: () => number;
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #byAddress = new Map<string, { last: number; failures: number }>();

  constructor(now: () => number, limit = FAILED_LOGINS_PER_WINDOW, windowMs = THROTTLE_WINDOW_MS) {
    this.#now = now;
    this.#limit = limit;
    this.#windowMs = windowMs;
  }

  #entry(address: string) {
    const now = this.#now();
    const e = this.#byAddress.get(address);
    if (e && now - e.last < this.#windowMs) return e;
    this.#byAddress.delete(address);
    return undefined;
  }

  /** True while the address has used up its failures for this window. */
  blocked(address: string): boolean {
    return (this.#entry(address)?.failures ?? 0) >= this.#limit;
  }

  failed(address: string): void {
    const e = this.#entry(address);
    if (e) {
      e.failures++;
      e.last = this.#now();
      return;
    }
    if (this.#byAddress.size >= MAX_ADDRESSES) this.#byAddress.delete(this.#byAddress.keys().next().value!);
    this.#byAddress.set(address, { last: this.#now(), failures: 1 });
  }
}
