import type { Db } from './db.ts';

/** Named leases: the job a lease names runs on one API replica at a time. */
export class LeaseStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Takes the lease, or renews it for its holder, until `now + ttlMs`; false while another holder's lease is live. */
  async acquire(name: string, holder: string, now: number, ttlMs: number): Promise<boolean> {
    const row = await this.db
      .insertInto('leases')
      .values({ name, holder, expires_at: now + ttlMs })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet((eb) => ({ holder: eb.ref('excluded.holder'), expires_at: eb.ref('excluded.expires_at') }))
          .where((eb) => eb.or([eb('leases.holder', '=', holder), eb('leases.expires_at', '<=', now)])),
      )
      .returning('holder')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Gives the lease up (on shutdown) so another replica takes it without waiting for expiry. */
  async release(name: string, holder: string): Promise<void> {
    await this.db.deleteFrom('leases').where('name', '=', name).where('holder', '=', holder).execute();
  }
}
