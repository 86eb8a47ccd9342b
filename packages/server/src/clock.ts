/** Time source for every rule that depends on time, so tests can drive it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told to; used by tests of timers and metering. */
export class ManualClock implements Clock {
  #ms: number;
  constructor(startMs: number) {
    this.#ms = startMs;
  }
  now(): number {
    return this.#ms;
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
}

export const iso = (ms: number) => new Date(ms).toISOString();
