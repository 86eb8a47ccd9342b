import type { Db } from './db.ts';

export interface RegionEndpoint {
  url: string;
  region: string;
  heartbeatAt: number;
}

export class RegionStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async announce(url: string, region: string, now: number): Promise<void> {
    await this.db
      .insertInto('region_endpoints')
      .values({ url, region, heartbeat_at: now })
      .onConflict((oc) => oc.column('url').doUpdateSet({ region, heartbeat_at: now }))
      .execute();
  }

  async list(): Promise<RegionEndpoint[]> {
    const rows = await this.db.selectFrom('region_endpoints').selectAll().orderBy('region').orderBy('url').execute();
    return rows.map((r) => ({ url: r.url, region: r.region, heartbeatAt: Number(r.heartbeat_at) }));
  }

  /** An API replica that shut down cleanly withdraws its URL. */
  async withdraw(url: string): Promise<void> {
    await this.db.deleteFrom('region_endpoints').where('url', '=', url).execute();
  }
}
