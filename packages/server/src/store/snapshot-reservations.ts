import type { Db } from './db.ts';
import { lockTeam } from './locks.ts';

/** Snapshot statuses that count against a team's snapshot cap. */
const COUNTED = ['creating', 'ready', 'deleting'];

export interface SnapshotCaps {
  max: number;
  maxInFlight: number;
}

export type Reservation = { reserved: true } | { reserved: false; cap: 'total' | 'in_flight'; total: number; inFlight: number };

/**
 * Snapshot creations admitted under a team's caps but not yet stored as rows, kept in the store so
 * the caps hold across API replicas. A reservation lives from admission until its snapshot row is
 * inserted; one of a replica that died expires.
 */
export class SnapshotReservationStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Reserves one creation when the team is under both caps (counting other replicas' reservations). */
  async reserve(id: string, teamId: string, caps: SnapshotCaps, now: number, ttlMs: number): Promise<Reservation> {
    return this.db.transaction().execute(async (tx) => {
      await lockTeam(tx, teamId);
      // One statement, so one view: a reservation released after its row was inserted is never missed twice.
      const counts = await tx
        .selectNoFrom((eb) => [
          eb
            .selectFrom('snapshots')
            .select((e) => e.fn.countAll<number>().as('n'))
            .where('team_id', '=', teamId)
            .where('deleted_at', 'is', null)
            .where('status', 'in', COUNTED)
            .as('total'),
          eb
            .selectFrom('snapshots')
            .select((e) => e.fn.countAll<number>().as('n'))
            .where('team_id', '=', teamId)
            .where('deleted_at', 'is', null)
            .where('status', '=', 'creating')
            .as('creating'),
          eb
            .selectFrom('snapshot_reservations')
            .select((e) => e.fn.countAll<number>().as('n'))
            .where('team_id', '=', teamId)
            .where('expires_at', '>', now)
            .as('reserved'),
        ])
        .executeTakeFirstOrThrow();
      const [total, creating, reserved] = [Number(counts.total), Number(counts.creating), Number(counts.reserved)];
      if (total + reserved >= caps.max) return { reserved: false as const, cap: 'total' as const, total, inFlight: creating + reserved };
      if (creating + reserved >= caps.maxInFlight) return { reserved: false as const, cap: 'in_flight' as const, total, inFlight: creating + reserved };
      await tx
        .insertInto('snapshot_reservations')
        .values({ id, team_id: teamId, expires_at: now + ttlMs })
        .execute();
      return { reserved: true as const };
    });
  }

  /** Drops the reservation (its row is stored, or the creation failed), and any expired ones. */
  async release(id: string, now: number): Promise<void> {
    await this.db
      .deleteFrom('snapshot_reservations')
      .where((eb) => eb.or([eb('id', '=', id), eb('expires_at', '<=', now)]))
      .execute();
  }
}
