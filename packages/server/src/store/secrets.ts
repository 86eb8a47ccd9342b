import type { Db } from './db.ts';

export interface SecretRecord {
  id: string;
  teamId: string;
  name: string;
  ciphertext: string;
  allowedHosts: string[];
  createdAt: number;
  revokedAt: number | null;
}

export interface BindingRecord {
  sandboxId: string;
  env: string;
  secretId: string;
  token: string;
  createdAt: number;
}

type SecretRow = { id: string; team_id: string; name: string; ciphertext: string; allowed_hosts: string; created_at: number; revoked_at: number | null };

const toSecret = (r: SecretRow): SecretRecord => ({
  id: r.id,
  teamId: r.team_id,
  name: r.name,
  ciphertext: r.ciphertext,
  allowedHosts: JSON.parse(r.allowed_hosts),
  createdAt: Number(r.created_at),
  revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
});

/** Secrets and their bindings to sandboxes. */
export class SecretStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** False when the team already has a live secret of that name. */
  async insert(s: SecretRecord): Promise<boolean> {
    try {
      await this.db
        .insertInto('secrets')
        .values({ id: s.id, team_id: s.teamId, name: s.name, ciphertext: s.ciphertext, allowed_hosts: JSON.stringify(s.allowedHosts), created_at: s.createdAt, revoked_at: null })
        .execute();
      return true;
    } catch (err) {
      if (/UNIQUE/.test(String(err))) return false;
      throw err;
    }
  }

  async live(teamId: string, name: string): Promise<SecretRecord | undefined> {
    const row = await this.db.selectFrom('secrets').selectAll().where('team_id', '=', teamId).where('name', '=', name).where('revoked_at', 'is', null).executeTakeFirst();
    return row && toSecret(row);
  }

  async anyWithName(teamId: string, name: string): Promise<boolean> {
    const row = await this.db.selectFrom('secrets').select('id').where('team_id', '=', teamId).where('name', '=', name).executeTakeFirst();
    return row !== undefined;
  }

  async listLive(teamId: string): Promise<SecretRecord[]> {
    const rows = await this.db.selectFrom('secrets').selectAll().where('team_id', '=', teamId).where('revoked_at', 'is', null).orderBy('name').execute();
    return rows.map(toSecret);
  }

  async byIds(ids: string[]): Promise<SecretRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.selectFrom('secrets').selectAll().where('id', 'in', ids).execute();
    return rows.map(toSecret);
  }

  /** Which of these secrets are revoked, and when (for caches of other API replicas). */
  async revokedAmong(ids: string[]): Promise<{ id: string; revokedAt: number }[]> {
    const out: { id: string; revokedAt: number }[] = [];
    // Chunks keep the statement within both engines' limits on bound parameters.
    for (let i = 0; i < ids.length; i += 1000) {
      const rows = await this.db
        .selectFrom('secrets')
        .select(['id', 'revoked_at'])
        .where('id', 'in', ids.slice(i, i + 1000))
        .where('revoked_at', 'is not', null)
        .execute();
      for (const r of rows) out.push({ id: r.id, revokedAt: Number(r.revoked_at) });
    }
    return out;
  }

  /** Revoked secrets bound to these sandboxes, by name. */
  async revokedBound(sandboxIds: string[]): Promise<{ sandboxId: string; name: string }[]> {
    if (sandboxIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('secret_bindings')
      .innerJoin('secrets', 'secrets.id', 'secret_bindings.secret_id')
      .select(['secret_bindings.sandbox_id', 'secrets.name'])
      .where('secret_bindings.sandbox_id', 'in', sandboxIds)
      .where('secrets.revoked_at', 'is not', null)
      .execute();
    return rows.map((r) => ({ sandboxId: r.sandbox_id, name: r.name }));
  }

  async revoke(id: string, now: number): Promise<void> {
    await this.db.updateTable('secrets').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  }

  async insertBindings(bs: BindingRecord[]): Promise<void> {
    if (bs.length === 0) return;
    await this.db
      .insertInto('secret_bindings')
      .values(bs.map((b) => ({ sandbox_id: b.sandboxId, env: b.env, secret_id: b.secretId, token: b.token, created_at: b.createdAt })))
      .execute();
  }

  async deleteBindings(sandboxId: string): Promise<void> {
    await this.db.deleteFrom('secret_bindings').where('sandbox_id', '=', sandboxId).execute();
  }

  async bindingsOf(sandboxId: string): Promise<BindingRecord[]> {
    const rows = await this.db.selectFrom('secret_bindings').selectAll().where('sandbox_id', '=', sandboxId).execute();
    return rows.map((r) => ({ sandboxId: r.sandbox_id, env: r.env, secretId: r.secret_id, token: r.token, createdAt: Number(r.created_at) }));
  }

  /** Bindings of sandboxes that are not deleted. */
  async liveBindings(): Promise<BindingRecord[]> {
    const rows = await this.db
      .selectFrom('secret_bindings')
      .innerJoin('sandboxes', 'sandboxes.id', 'secret_bindings.sandbox_id')
      .select(['secret_bindings.sandbox_id', 'secret_bindings.env', 'secret_bindings.secret_id', 'secret_bindings.token', 'secret_bindings.created_at'])
      .where('sandboxes.deleted_at', 'is', null)
      .execute();
    return rows.map((r) => ({ sandboxId: r.sandbox_id, env: r.env, secretId: r.secret_id, token: r.token, createdAt: Number(r.created_at) }));
  }

  /** Bindings whose sandbox row is missing or deleted (a create cut short, or a finished delete). */
  async deleteOrphanBindings(): Promise<void> {
    await this.db
      .deleteFrom('secret_bindings')
      .where((eb) => eb.not(eb.exists(eb.selectFrom('sandboxes').select('sandboxes.id').whereRef('sandboxes.id', '=', 'secret_bindings.sandbox_id').where('sandboxes.deleted_at', 'is', null))))
      .execute();
  }
}
