import type { Clock } from '../../clock.ts';
import { badRequest, conflict, forbidden, notFound } from '../../errors.ts';
import { isUuid, newId } from '../../ids.ts';
import type { TeamCapabilities } from '../../schemas/team.ts';
import { type AssignmentRecord, DEACTIVATED, type MemberRecord, OWNER, type TeamManagementStore } from '../../store/team-management.ts';
import { hashKey, newKeySecret } from './auth.ts';
import type { Principal } from './principal.ts';
import { isRole, PERMISSIONS, type Permission, permissionsOfRoles, ROLES, type Role } from './permissions.ts';

export const MEMBER_STATUSES = ['active', DEACTIVATED] as const;

export interface ManagementState {
  members: (MemberRecord & { roles: string[] })[];
  assignments: AssignmentRecord[];
  capabilities: TeamCapabilities;
  assignableRoles: Role[];
}

/** Who may change what in a team. The actor is always the calling API key's user. */
export class TeamManagementService {
  readonly store: TeamManagementStore;
  readonly clock: Clock;
  /** Tells the principal cache that a committed change narrowed or widened what keys may do. */
  readonly #changed: () => void;
  constructor(store: TeamManagementStore, clock: Clock, changed: () => void) {
    this.store = store;
    this.clock = clock;
    this.#changed = changed;
  }

  /**
   * Team endpoints answer 403 for any team id other than the caller's, whether or not it exists,
   * so ids of other teams cannot be probed.
   */
  checkTeam(p: Principal, teamId: string): void {
    if (teamId.toLowerCase() !== p.teamId) throw forbidden('this API key belongs to another team');
  }

  async state(p: Principal, teamId: string): Promise<ManagementState> {
    this.checkTeam(p, teamId);
    this.#require(p, 'members:read');
    const [members, assignments] = await Promise.all([this.store.listMembers(p.teamId), this.store.listAssignments(p.teamId)]);
    const roles = new Map<string, string[]>();
    for (const a of assignments) if (a.revokedAt === null) roles.set(a.userId, [...(roles.get(a.userId) ?? []), a.roleName]);
    const manage = p.permissions.includes('members:manage');
    return {
      members: members.map((m) => ({ ...m, roles: roles.get(m.id) ?? [] })),
      assignments,
      capabilities: {
        can_view_role_assignments: true,
        can_invite_members: manage,
        can_deactivate_members: manage,
        can_assign_roles: manage,
        can_revoke_roles: manage,
      },
      assignableRoles: await this.#assignableRoles(p),
    };
  }

  /** Adds a member with one role and issues their first API key (with that role's permissions). */
  async invite(p: Principal, teamId: string, body: { email: string; full_name: string; role: string }) {
    this.checkTeam(p, teamId);
    this.#require(p, 'members:manage');
    await this.#checkAssignable(p, body.role);
    if (await this.store.emailInUse(p.teamId, body.email)) throw conflict(`an active member with e-mail '${body.email}' exists already`);
    const now = this.clock.now();
    const userId = newId();
    const key = newKeySecret();
    const permissions = PERMISSIONS.filter((perm) => permissionsOfRoles([body.role]).has(perm));
    const keyId = newId();
    await this.store.addMember({
      teamId: p.teamId,
      userId,
      email: body.email,
      fullName: body.full_name,
      assignment: { id: newId(), teamId: p.teamId, userId, roleName: body.role, grantedBy: p.userId, now },
      key: { id: keyId, name: 'default', hash: hashKey(key), prefix: key.slice(0, 7), permissions },
      now,
    });
    const member = (await this.store.listMembers(p.teamId)).find((m) => m.id === userId)!;
    return { member: { ...member, roles: [body.role] }, key: { id: keyId, key, permissions } };
  }

  /** Deactivates a member: the row stays, their keys stop working at once. */
  async deactivate(p: Principal, teamId: string, userId: string): Promise<void> {
    this.checkTeam(p, teamId);
    this.#require(p, 'members:manage');
    const target = await this.#member(p, userId);
    if (target.roles.includes(OWNER) && !(await this.#callerRoles(p)).includes(OWNER)) {
      throw forbidden('only an owner can deactivate an owner');
    }
    const result = await this.store.deactivate(p.teamId, target.id, this.clock.now());
    if (result === 'done') this.#changed();
    if (result === 'not_found') throw memberNotFound(userId);
    if (result === 'unchanged') throw conflict(`member '${target.id}' is already ${target.status}`);
    if (result === 'last_owner') throw conflict('the last active owner cannot be deactivated; make another member owner first');
  }

  async grant(p: Principal, teamId: string, userId: string, role: string): Promise<AssignmentRecord> {
    this.checkTeam(p, teamId);
    this.#require(p, 'members:manage');
    await this.#checkAssignable(p, role);
    const target = await this.#member(p, userId);
    const id = newId();
    const result = await this.store.grant({ id, teamId: p.teamId, userId: target.id, roleName: role, grantedBy: p.userId, now: this.clock.now() });
    if (result === 'done') this.#changed();
    if (result === 'not_found') throw conflict(`member '${target.id}' is ${target.status}; roles go only to active members`);
    if (result === 'unchanged') throw conflict(`member '${target.id}' already holds the '${role}' role`);
    return (await this.store.listAssignments(p.teamId)).find((a) => a.id === id)!;
  }

  async revoke(p: Principal, teamId: string, userId: string, role: string): Promise<void> {
    this.checkTeam(p, teamId);
    this.#require(p, 'members:manage');
    await this.#checkAssignable(p, role);
    const target = await this.#member(p, userId);
    const result = await this.store.revoke(p.teamId, target.id, role, this.clock.now());
    if (result === 'done') this.#changed();
    if (result === 'not_found') throw notFound(`member '${target.id}' does not hold the '${role}' role`);
    if (result === 'last_owner') throw conflict('the last active owner cannot lose the owner role; make another member owner first');
  }

  #require(p: Principal, perm: Permission): void {
    if (!p.permissions.includes(perm)) throw forbidden(`this API key lacks the '${perm}' permission`);
  }

  async #callerRoles(p: Principal): Promise<string[]> {
    return (await this.store.listAssignments(p.teamId)).filter((a) => a.userId === p.userId && a.revokedAt === null).map((a) => a.roleName);
  }

  /** Owners hand out every role; admins every role but owner; others none. */
  async #assignableRoles(p: Principal): Promise<Role[]> {
    if (!p.permissions.includes('members:manage')) return [];
    const mine = await this.#callerRoles(p);
    if (mine.includes(OWNER)) return [...ROLES];
    return ROLES.filter((r) => r !== OWNER);
  }

  async #checkAssignable(p: Principal, role: string): Promise<void> {
    if (!isRole(role)) throw badRequest(`unknown role '${role.slice(0, 64)}'; known: ${ROLES.join(', ')}`);
    if (!(await this.#assignableRoles(p)).includes(role)) throw forbidden(`this API key cannot assign or revoke the '${role}' role`);
  }

  async #member(p: Principal, userId: string): Promise<MemberRecord & { roles: string[] }> {
    const m = isUuid(userId) ? (await this.store.listMembers(p.teamId)).find((u) => u.id === userId.toLowerCase()) : undefined;
    if (!m) throw memberNotFound(userId);
    const roles = (await this.store.listAssignments(p.teamId)).filter((a) => a.userId === m.id && a.revokedAt === null).map((a) => a.roleName);
    return { ...m, roles };
  }
}

const memberNotFound = (userId: string) => notFound(`member '${userId.slice(0, 100)}' not found in this team`);
