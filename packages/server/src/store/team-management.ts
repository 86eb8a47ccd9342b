import { bumpAuthEpoch } from './auth-epoch.ts';
import type { Db } from './db.ts';
import { lockTeam } from './locks.ts';

export interface MemberRecord {
  id: string;
  teamId: string;
  email: string;
  fullName: string;
  status: string;
  createdAt: number;
  updatedAt: number;
}

export interface AssignmentRecord {
  id: string;
  teamId: string;
  userId: string;
  email: string;
  roleName: string;
  scopeType: string;
  grantedBy: string;
  grantedAt: number;
  createdAt: number;
  updatedAt: number;
  revokedAt: number | null;
}

export interface NewAssignment {
  id: string;
  teamId: string;
  userId: string;
  roleName: string;
  grantedBy: string;
  now: number;
}

/** What a guarded member change did; the checks run inside the write transaction. */
export type ChangeResult = 'done' | 'not_found' | 'last_owner' | 'unchanged';

export const OWNER = 'owner';
export const DEACTIVATED = 'deactivated';

/** Names of the roles a user holds now. */
export async function activeRoleNames(db: Db, userId: string): Promise<string[]> {
  const rows = await db.selectFrom('role_assignments').select('role_name').where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
  return [...new Set(rows.map((r) => r.role_name))];
}

export async function insertAssignment(db: Db, a: NewAssignment): Promise<void> {
  await db
    .insertInto('role_assignments')
    .values({
      id: a.id,
      team_id: a.teamId,
      user_id: a.userId,
      role_name: a.roleName,
      scope_type: 'team',
      granted_by: a.grantedBy,
      granted_at: a.now,
      created_at: a.now,
      updated_at: a.now,
      revoked_at: null,
    })
    .execute();
}

/** Active members other than `userId` who hold a live owner assignment. */
async function otherActiveOwners(db: Db, teamId: string, userId: string): Promise<number> {
  const row = await db
    .selectFrom('role_assignments')
    .innerJoin('users', 'users.id', 'role_assignments.user_id')
    .select((eb) => eb.fn.count<number>('users.id').distinct().as('n'))
    .where('role_assignments.team_id', '=', teamId)
    .where('role_assignments.role_name', '=', OWNER)
    .where('role_assignments.revoked_at', 'is', null)
    .where('users.status', '=', 'active')
    .where('users.id', '!=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Members, role assignments and rollout gates of teams. */
export class TeamManagementStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async listMembers(teamId: string): Promise<MemberRecord[]> {
    const rows = await this.db.selectFrom('users').selectAll().where('team_id', '=', teamId).orderBy('created_at').orderBy('id').execute();
    return rows.map((r) => ({
      id: r.id,
      teamId: r.team_id,
      email: r.email,
      fullName: r.full_name,
      status: r.status,
      createdAt: Number(r.created_at),
      updatedAt: Number(r.updated_at),
    }));
  }

  /** Every assignment of the team, live and revoked, oldest first. */
  async listAssignments(teamId: string): Promise<AssignmentRecord[]> {
    const rows = await this.db
      .selectFrom('role_assignments')
      .innerJoin('users', 'users.id', 'role_assignments.user_id')
      .selectAll('role_assignments')
      .select('users.email')
      .where('role_assignments.team_id', '=', teamId)
      .orderBy('role_assignments.granted_at')
      .orderBy('role_assignments.id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      teamId: r.team_id,
      userId: r.user_id,
      email: r.email,
      roleName: r.role_name,
      scopeType: r.scope_type,
      grantedBy: r.granted_by,
      grantedAt: Number(r.granted_at),
      createdAt: Number(r.created_at),
      updatedAt: Number(r.updated_at),
      revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
    }));
  }

  async emailInUse(teamId: string, email: string): Promise<boolean> {
    const row = await this.db.selectFrom('users').select('id').where('team_id', '=', teamId).where('email', '=', email).where('status', '=', 'active').executeTakeFirst();
    return row !== undefined;
  }

  /** Adds an active member with one role and a first API key, atomically. */
  async addMember(m: {
    teamId: string;
    userId: string;
    email: string;
    fullName: string;
    assignment: NewAssignment;
    key: { id: string; name: string; hash: string; prefix: string; permissions: string[] };
    now: number;
  }): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('users').values({ id: m.userId, team_id: m.teamId, email: m.email, full_name: m.fullName, status: 'active', created_at: m.now, updated_at: m.now }).execute();
      await insertAssignment(tx, m.assignment);
      await tx
        .insertInto('api_keys')
        .values({
          id: m.key.id,
          team_id: m.teamId,
          user_id: m.userId,
          name: m.key.name,
          key_hash: m.key.hash,
          key_prefix: m.key.prefix,
          permissions: JSON.stringify(m.key.permissions),
          created_at: m.now,
          last_used_at: null,
          revoked_at: null,
        })
        .execute();
    });
  }

  /**
   * Marks an active member deactivated; the row stays. Their keys stop working at once because
   * key lookup requires an active user. Refused when they are the team's last active owner.
   */
  async deactivate(teamId: string, userId: string, now: number): Promise<ChangeResult> {
    return this.db.transaction().execute(async (tx) => {
      await lockTeam(tx, teamId);
      const user = await tx.selectFrom('users').select('status').where('id', '=', userId).where('team_id', '=', teamId).executeTakeFirst();
      if (!user) return 'not_found';
      if (user.status !== 'active') return 'unchanged';
      const roles = await activeRoleNames(tx, userId);
      if (roles.includes(OWNER) && (await otherActiveOwners(tx, teamId, userId)) === 0) return 'last_owner';
      await tx.updateTable('users').set({ status: DEACTIVATED, updated_at: now }).where('id', '=', userId).execute();
      await bumpAuthEpoch(tx);
      return 'done';
    });
  }

  /** Grants a role the active member does not hold yet. */
  async grant(a: NewAssignment): Promise<ChangeResult> {
    return this.db.transaction().execute(async (tx) => {
      const user = await tx.selectFrom('users').select('status').where('id', '=', a.userId).where('team_id', '=', a.teamId).executeTakeFirst();
      if (user?.status !== 'active') return 'not_found';
      if ((await activeRoleNames(tx, a.userId)).includes(a.roleName)) return 'unchanged';
      await insertAssignment(tx, a);
      await bumpAuthEpoch(tx);
      return 'done';
    });
  }

  /** Revokes a live role; the assignment row stays with `revoked_at` set. */
  async revoke(teamId: string, userId: string, roleName: string, now: number): Promise<ChangeResult> {
    return this.db.transaction().execute(async (tx) => {
      await lockTeam(tx, teamId);
      const live = await tx
        .selectFrom('role_assignments')
        .innerJoin('users', 'users.id', 'role_assignments.user_id')
        .select(['role_assignments.id', 'users.status'])
        .where('role_assignments.team_id', '=', teamId)
        .where('role_assignments.user_id', '=', userId)
        .where('role_assignments.role_name', '=', roleName)
        .where('role_assignments.revoked_at', 'is', null)
        .execute();
      if (live.length === 0) return 'not_found';
      if (roleName === OWNER && live[0]!.status === 'active' && (await otherActiveOwners(tx, teamId, userId)) === 0) return 'last_owner';
      await tx
        .updateTable('role_assignments')
        .set({ revoked_at: now, updated_at: now })
        .where(
          'id',
          'in',
          live.map((r) => r.id),
        )
        .execute();
      await bumpAuthEpoch(tx);
      return 'done';
    });
  }

  /**
   * Gives the earliest active member of any team without a single role assignment the owner role:
   * repairs a team whose creation was cut short between its user and its owner assignment.
   */
  async grantMissingOwners(newId: () => string, now: number): Promise<void> {
    const orphans = await this.db
      .selectFrom('teams')
      .select('teams.id')
      .where((eb) => eb.not(eb.exists(eb.selectFrom('role_assignments').select('role_assignments.id').whereRef('role_assignments.team_id', '=', 'teams.id'))))
      .execute();
    for (const t of orphans) {
      const first = await this.db.selectFrom('users').select('id').where('team_id', '=', t.id).where('status', '=', 'active').orderBy('created_at').orderBy('id').executeTakeFirst();
      if (first) await insertAssignment(this.db, { id: newId(), teamId: t.id, userId: first.id, roleName: OWNER, grantedBy: first.id, now });
    }
    if (orphans.length > 0) await bumpAuthEpoch(this.db);
  }

  async gateSettings(teamId: string): Promise<Map<string, boolean>> {
    const rows = await this.db.selectFrom('team_gates').select(['gate', 'enabled']).where('team_id', '=', teamId).execute();
    return new Map(rows.map((r) => [r.gate, Number(r.enabled) === 1]));
  }

  async setGate(teamId: string, gate: string, enabled: boolean, now: number): Promise<void> {
    await this.db
      .insertInto('team_gates')
      .values({ team_id: teamId, gate, enabled: enabled ? 1 : 0, updated_at: now })
      .onConflict((oc) => oc.columns(['team_id', 'gate']).doUpdateSet({ enabled: enabled ? 1 : 0, updated_at: now }))
      .execute();
  }
}
