import type { Db } from './db.ts';

/**
 * Request counts per rate-limit key, one row per key: a hit past the end of the key's window starts
 * a new one. One statement per request, atomic on the key's row, so every API replica counts into
 * the same window.
 */
export class RateLimitStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Counts one request; answers the key's count in its current window and when that window started. */
  async hit(key: string, now: number, windowMs: number): Promise<{ hits: number; windowStart: number }> {
    const row = await this.db
      .insertInto('rate_limits')
      .values({ key, window_start: now, hits: 1 })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet((eb) => {
          const lapsed = eb('rate_limits.window_start', '<=', now - windowMs);
          return {
            hits: eb
              .case()
              .when(lapsed)
              .then(1)
              .else(eb('rate_limits.hits', '+', 1))
              .end(),
            window_start: eb.case().when(lapsed).then(now).else(eb.ref('rate_limits.window_start')).end(),
          };
        }),
      )
      .returning(['hits', 'window_start'])
      .executeTakeFirstOrThrow();
    return { hits: row.hits, windowStart: row.window_start };
  }

  /** Drops keys whose window started before `before` (a later hit would start afresh anyway). */
  async sweep(before: number): Promise<void> {
    await this.db.deleteFrom('rate_limits').where('window_start', '<', before).execute();
  }
}
