import type { Db } from './db.ts';
import { lockTeam } from './locks.ts';

/** Statuses that hold one of the team's active-sandbox slots. */
export const ACTIVE_STATUSES = ['active', 'pausing', 'resuming', 'migrating'];

/**
 * A team's active-sandbox slots, counted in the store so the cap holds across API replicas:
 * live sandboxes in an active status plus unexpired claims of creates and resumes in flight.
 */
export class ActiveSlotStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Claims a slot when fewer than `max` are taken; otherwise answers how many sandboxes are active. */
  async claim(claimId: string, teamId: string, max: number, now: number, ttlMs: number): Promise<{ claimed: true } | { claimed: false; active: number }> {
    return this.db.transaction().execute(async (tx) => {
      await lockTeam(tx, teamId);
      const active = await tx
        .selectFrom('sandboxes')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('team_id', '=', teamId)
        .where('deleted_at', 'is', null)
        .where('status', 'in', ACTIVE_STATUSES)
        .executeTakeFirstOrThrow();
      const claims = await tx
        .selectFrom('active_slot_claims')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('team_id', '=', teamId)
        .where('expires_at', '>', now)
        .executeTakeFirstOrThrow();
      if (Number(active.n) + Number(claims.n) >= max) return { claimed: false as const, active: Number(active.n) };
      await tx
        .insertInto('active_slot_claims')
        .values({ id: claimId, team_id: teamId, expires_at: now + ttlMs })
        .execute();
      return { claimed: true as const };
    });
  }

  /** Drops the claim (the sandbox row now holds the slot, or the create failed), and any expired ones. */
  async release(claimId: string, now: number): Promise<void> {
    await this.db
      .deleteFrom('active_slot_claims')
      .where((eb) => eb.or([eb('id', '=', claimId), eb('expires_at', '<=', now)]))
      .execute();
  }
}
