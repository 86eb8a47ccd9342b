import { bumpAuthEpoch } from './auth-epoch.ts';
import type { Db } from './db.ts';

export interface ApiKeyRecord {
  id: string;
  teamId: string;
  userId: string;
  name: string;
  keyPrefix: string;
  permissions: string[];
  createdAt: number;
  lastUsedAt: number | null;
}

export interface TeamRecord {
  id: string;
  name: string;
  limits: Record<string, number>;
  createdAt: number;
}

/** Teams, users and API keys. Keys are looked up by hash; the plain key is never stored. */
export class TeamStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async countTeams(): Promise<number> {
    const row = await this.db
      .selectFrom('teams')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async getTeam(id: string): Promise<TeamRecord | undefined> {
    const row = await this.db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
    return row && { id: row.id, name: row.name, limits: row.limits ? JSON.parse(row.limits) : {}, createdAt: Number(row.created_at) };
  }

  async getTeamByName(name: string): Promise<TeamRecord | undefined> {
    const row = await this.db.selectFrom('teams').select('id').where('name', '=', name).executeTakeFirst();
    return row && this.getTeam(row.id);
  }

  async setTeamLimits(id: string, limits: Record<string, number>): Promise<void> {
    await this.db
      .updateTable('teams')
      .set({ limits: JSON.stringify(limits) })
      .where('id', '=', id)
      .execute();
  }

  /** Creates a team with its owner user and first key, atomically. */
  async createTeam(t: {
    teamId: string;
    teamName: string;
    userId: string;
    email: string;
    fullName: string;
    key: { id: string; name: string; hash: string; prefix: string; permissions: string[] };
    now: number;
  }): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('teams').values({ id: t.teamId, name: t.teamName, limits: null, created_at: t.now }).execute();
      await tx.insertInto('users').values({ id: t.userId, team_id: t.teamId, email: t.email, full_name: t.fullName, status: 'active', created_at: t.now, updated_at: t.now }).execute();
      await tx
        .insertInto('api_keys')
        .values({
          id: t.key.id,
          team_id: t.teamId,
          user_id: t.userId,
          name: t.key.name,
          key_hash: t.key.hash,
          key_prefix: t.key.prefix,
          permissions: JSON.stringify(t.key.permissions),
          created_at: t.now,
          last_used_at: null,
          revoked_at: null,
        })
        .execute();
    });
  }

  async insertKey(k: { id: string; teamId: string; userId: string; name: string; hash: string; prefix: string; permissions: string[]; now: number }) {
    await this.db
      .insertInto('api_keys')
      .values({
        id: k.id,
        team_id: k.teamId,
        user_id: k.userId,
        name: k.name,
        key_hash: k.hash,
        key_prefix: k.prefix,
        permissions: JSON.stringify(k.permissions),
        created_at: k.now,
        last_used_at: null,
        revoked_at: null,
      })
      .execute();
  }

  /** The live key with this hash whose owner is an active member. */
  async findKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('users', 'users.id', 'api_keys.user_id')
      .select(['api_keys.id', 'api_keys.team_id', 'api_keys.user_id', 'api_keys.name', 'api_keys.key_prefix', 'api_keys.permissions', 'api_keys.created_at', 'api_keys.last_used_at'])
      .where('api_keys.key_hash', '=', hash)
      .where('api_keys.revoked_at', 'is', null)
      .where('users.status', '=', 'active')
      .executeTakeFirst();
    return row && toKey(row);
  }

  async listKeys(teamId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select(['id', 'team_id', 'user_id', 'name', 'key_prefix', 'permissions', 'created_at', 'last_used_at'])
      .where('team_id', '=', teamId)
      .where('revoked_at', 'is', null)
      .orderBy('created_at', 'asc')
      .execute();
    return rows.map(toKey);
  }

  /** Revokes a live key of the team; false when there is none. */
  async revokeKey(teamId: string, id: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const res = await tx.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).where('team_id', '=', teamId).where('revoked_at', 'is', null).executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return false;
      await bumpAuthEpoch(tx);
      return true;
    });
  }
}

export function toKey(row: { id: string; team_id: string; user_id: string; name: string; key_prefix: string; permissions: string; created_at: number; last_used_at: number | null }): ApiKeyRecord {
  return {
    id: row.id,
    teamId: row.team_id,
    userId: row.user_id,
    name: row.name,
    keyPrefix: row.key_prefix,
    permissions: JSON.parse(row.permissions),
    createdAt: Number(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
  };
}
