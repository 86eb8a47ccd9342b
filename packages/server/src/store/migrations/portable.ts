import type { CreateTableBuilder, Kysely } from 'kysely';
import { dialectOf } from '../dialect.ts';

/**
 * An ever-growing integer primary key. SQLite keeps the exact column it was created with
 * (INTEGER PRIMARY KEY AUTOINCREMENT), so existing data directories are untouched;
 * PostgreSQL has no AUTOINCREMENT and takes a bigserial.
 */
export function addSerialKey<T extends string>(t: CreateTableBuilder<T, any>, db: Kysely<any>, name: string): CreateTableBuilder<T, any> {
  if (dialectOf(db) === 'postgres') return t.addColumn(name, 'bigserial', (c) => c.primaryKey());
  return t.addColumn(name, 'integer', (c) => c.primaryKey().autoIncrement());
}
