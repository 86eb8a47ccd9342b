import type { Db } from './db.ts';

export interface RateLimitCount {
  key: string;
  hits: number;
  windowStart: number;
}

/**
 * Request counts per rate-limit key, one row per key: hits added past the end of the key's window
 * start a new one. Every API replica adds into the same row, atomically.
 */
export class RateLimitStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Adds hits to keys (each key once); answers every key's count in its current window and when that window started. */
  async add(hits: { key: string; hits: number }[], now: number, windowMs: number): Promise<RateLimitCount[]> {
    if (hits.length === 0) return [];
    // Rows in key order: two replicas adding overlapping keys lock them in the same order, never deadlocking.
    const values = hits.toSorted((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((h) => ({ key: h.key, window_start: now, hits: h.hits }));
    const rows = await this.db
      .insertInto('rate_limits')
      .values(values)
      .onConflict((oc) =>
        oc.column('key').doUpdateSet((eb) => {
          const lapsed = eb('rate_limits.window_start', '<=', now - windowMs);
          return {
            hits: eb
              .case()
              .when(lapsed)
              .then(eb.ref('excluded.hits'))
              .else(eb('rate_limits.hits', '+', eb.ref('excluded.hits')))
              .end(),
            window_start: eb.case().when(lapsed).then(eb.ref('excluded.window_start')).else(eb.ref('rate_limits.window_start')).end(),
          };
        }),
      )
      .returning(['key', 'hits', 'window_start'])
      .execute();
    return rows.map((r) => ({ key: r.key, hits: r.hits, windowStart: r.window_start }));
  }

  /** Drops keys whose window started before `before` (a later hit would start afresh anyway). */
  async sweep(before: number): Promise<void> {
    await this.db.deleteFrom('rate_limits').where('window_start', '<', before).execute();
  }
}
