import { type Compilable, CompiledQuery } from 'kysely';
import type { Db } from './db.ts';

/** Stands for the builder's n-th argument while the query is compiled. */
class Placeholder {
  readonly n: number;
  constructor(n: number) {
    this.n = n;
  }
}

/**
 * A query built and compiled once, then run with each call's arguments. Kysely builds and compiles a
 * query on every call, which on the hottest reads (a sandbox by id, a list page) cost about as much
 * as the store's own work. `build` is called once with placeholders; where they land in the compiled
 * parameters is where each call's arguments go. Every argument must become exactly one parameter
 * (a compared value or a limit; not an `in` list).
 */
export function prepared<A extends unknown[], R>(db: Db, build: (...args: A) => Compilable<R>): (...args: A) => Promise<R[]> {
  const placeholders = Array.from({ length: build.length }, (_, n) => new Placeholder(n));
  const { sql, parameters } = build(...(placeholders as A)).compile();
  const slots = parameters.map((p) => (p instanceof Placeholder ? p.n : -1));
  for (const p of placeholders) if (slots.filter((n) => n === p.n).length !== 1) throw new Error(`prepared query: argument ${p.n} must be one parameter of: ${sql}`);
  return async (...args: A) => {
    const values = slots.map((n, i) => (n < 0 ? parameters[i] : args[n]));
    return (await db.executeQuery<R>(CompiledQuery.raw(sql, values))).rows;
  };
}
