import { sql } from 'kysely';
import type { Db } from './db.ts';
import { dialectOf } from './dialect.ts';

/*
 * Serialization inside a write transaction. SQLite needs none: Kysely runs every transaction of
 * the one process on a single connection, one at a time. PostgreSQL runs them side by side
 * (also from other API replicas), so checks that must hold at commit take a lock first.
 */

/** Holds the team's row until commit: guarded team changes (last owner, slot counts) do not interleave. */
export async function lockTeam(tx: Db, teamId: string): Promise<void> {
  if (dialectOf(tx) !== 'postgres') return;
  await tx.selectFrom('teams').select('id').where('id', '=', teamId).forUpdate().execute();
}

const EVENT_LOG_LOCK = 0x5e9e17;

/**
 * Appends to sandbox_events commit in sequence order: a reader that has seen event n never later
 * finds an event below n appear (metering's cursor would skip it). Held until commit.
 */
export async function lockEventLog(tx: Db): Promise<void> {
  if (dialectOf(tx) !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(${EVENT_LOG_LOCK})`.execute(tx);
}
