import type { Db } from './db.ts';

export type PreviewAccess = 'public' | 'private';

export interface PreviewPortRecord {
  sandboxId: string;
  port: number;
  access: PreviewAccess;
  createdAt: number;
}

export class PreviewPortStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Publishes or re-publishes (a new access replaces the old). */
  async upsert(p: PreviewPortRecord): Promise<void> {
    await this.db
      .insertInto('preview_ports')
      .values({ sandbox_id: p.sandboxId, port: p.port, access: p.access, created_at: p.createdAt })
      .onConflict((oc) => oc.columns(['sandbox_id', 'port']).doUpdateSet({ access: p.access }))
      .execute();
  }

  async get(sandboxId: string, port: number): Promise<PreviewPortRecord | undefined> {
    const r = await this.db.selectFrom('preview_ports').selectAll().where('sandbox_id', '=', sandboxId).where('port', '=', port).executeTakeFirst();
    return r && { sandboxId: r.sandbox_id, port: r.port, access: r.access as PreviewAccess, createdAt: Number(r.created_at) };
  }

  async list(sandboxId: string): Promise<PreviewPortRecord[]> {
    const rows = await this.db.selectFrom('preview_ports').selectAll().where('sandbox_id', '=', sandboxId).orderBy('port').execute();
    return rows.map((r) => ({ sandboxId: r.sandbox_id, port: r.port, access: r.access as PreviewAccess, createdAt: Number(r.created_at) }));
  }

  async delete(sandboxId: string, port: number): Promise<boolean> {
    const res = await this.db.deleteFrom('preview_ports').where('sandbox_id', '=', sandboxId).where('port', '=', port).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  async deleteAll(sandboxId: string): Promise<void> {
    await this.db.deleteFrom('preview_ports').where('sandbox_id', '=', sandboxId).execute();
  }
}
