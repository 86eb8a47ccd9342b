import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import { badRequest, forbidden, unauthorized } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { bumpAuthEpoch, readAuthEpoch } from '../../store/auth-epoch.ts';
import { activeRoleNames, insertAssignment, OWNER } from '../../store/team-management.ts';
import type { ConsoleSessionStore } from '../../store/console-sessions.ts';
import type { ApiKeyRecord, TeamStore } from '../../store/teams.ts';
import { isPermission, PERMISSIONS, type Permission, permissionsOfRoles } from './permissions.ts';
import type { Principal } from './principal.ts';
import { type CachedPrincipal, PrincipalCache } from './principal-cache.ts';

/** A change made through another replica applies here within this long: cached principals are used only while the last epoch check is younger. */
export const PRINCIPAL_STALE_AFTER_MS = 500;

export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');
/** `e2b` keys look like E2B's own (`e2b_` and 40 hex digits), for SDK versions that check the shape. */
export type KeyFormat = 'sandpit' | 'e2b';
export const newKeySecret = (format: KeyFormat = 'sandpit') => (format === 'e2b' ? `e2b_${randomBytes(20).toString('hex')}` : `sp_${randomBytes(24).toString('base64url')}`);

export class AuthService {
  readonly teams: TeamStore;
  readonly clock: Clock;
  /** Console sessions: the API accepts their cookie as it accepts the key they were opened with. */
  readonly sessions: ConsoleSessionStore | undefined;
  /** Kept fresh by `syncChanges` (every process runs it on a timer; a request finding it late runs it first). */
  readonly #principals: PrincipalCache;
  constructor(teams: TeamStore, clock: Clock, sessions?: ConsoleSessionStore) {
    this.teams = teams;
    this.clock = clock;
    this.sessions = sessions;
    this.#principals = new PrincipalCache(() => readAuthEpoch(teams.db), PRINCIPAL_STALE_AFTER_MS);
  }

  async authenticate(key: string | undefined): Promise<Principal> {
    if (!key) throw unauthorized('missing X-API-Key header');
    const hash = hashKey(key);
    const p = await this.#principals.get(`key:${hash}`, this.clock.now(), async () => {
      const rec = await this.teams.findKeyByHash(hash);
      return rec && { principal: await this.principalOf(rec), endsAt: Number.POSITIVE_INFINITY };
    });
    if (!p) throw unauthorized('invalid API key');
    return p;
  }

  /** The principal of a live console session token (the cookie's value). */
  async authenticateSession(token: string): Promise<Principal> {
    const hash = hashKey(token);
    const now = this.clock.now();
    const p = await this.#principals.get(`session:${hash}`, now, async (): Promise<CachedPrincipal | undefined> => {
      const found = await this.sessions?.findKey(hash, now);
      return found && { principal: await this.principalOf(found.key), endsAt: found.expiresAt };
    });
    if (!p) throw unauthorized('the console session has ended; sign in again');
    return p;
  }

  /** The principal of a live key named by id (a token issued on its behalf); 401 once it is revoked. */
  async authenticateKeyId(teamId: string, keyId: string): Promise<Principal> {
    const rec = (await this.teams.listKeys(teamId)).find((k) => k.id === keyId);
    if (!rec) throw unauthorized('the API key this token was issued to is revoked');
    return this.principalOf(rec);
  }

  /** Learns changes other replicas (or operator commands) made to keys, members and roles; run periodically. */
  syncChanges(): Promise<void> {
    return this.#principals.sync();
  }

  /** Called once a change to keys, members, roles or sessions is committed, so it applies to the next request here. */
  changed(): void {
    this.#principals.invalidate();
  }

  /** Revokes a live key of the team, on this replica at once; false when there is none. */
  async revokeKey(teamId: string, id: string): Promise<boolean> {
    const done = await this.teams.revokeKey(teamId, id, this.clock.now());
    if (done) this.changed();
    return done;
  }

  /** What a live key may do now; console sessions act through the key they were opened with. */
  async principalOf(rec: ApiKeyRecord): Promise<Principal> {
    // A key acts with its own permissions narrowed to its user's current roles, so a role change applies at once.
    const allowed = permissionsOfRoles(await activeRoleNames(this.teams.db, rec.userId));
    const permissions = rec.permissions.filter((perm) => allowed.has(perm as Permission));
    return { teamId: rec.teamId, userId: rec.userId, keyId: rec.id, permissions };
  }

  require(p: Principal, perm: Permission): void {
    if (!p.permissions.includes(perm)) throw forbidden(`this API key lacks the '${perm}' permission`);
  }

  /** Creates a team, its owner and an admin key with every permission; `key` fixes the key's value. */
  async createTeam(name: string, opts: { email?: string; key?: string } = {}) {
    const now = this.clock.now();
    const key = opts.key ?? newKeySecret();
    const ids = { teamId: newId(), userId: newId(), keyId: newId() };
    await this.teams.createTeam({
      teamId: ids.teamId,
      teamName: name,
      userId: ids.userId,
      email: opts.email ?? `owner@${name}.local`,
      fullName: 'Owner',
      key: { id: ids.keyId, name: 'admin', hash: hashKey(key), prefix: key.slice(0, 7), permissions: [...PERMISSIONS] },
      now,
    });
    // A crash before this line leaves a team without roles; startup repairs it (grantMissingOwners).
    await insertAssignment(this.teams.db, { id: newId(), teamId: ids.teamId, userId: ids.userId, roleName: OWNER, grantedBy: ids.userId, now });
    // The key may have been used (and cached without permissions) before its owner had a role.
    await bumpAuthEpoch(this.teams.db);
    this.changed();
    return { ...ids, key };
  }

  /** A new key for the caller's user with a subset of the caller's own permissions. */
  async createKey(p: Principal, name: string, permissions: string[] | undefined, format: KeyFormat = 'sandpit') {
    this.require(p, 'keys:manage');
    const wanted = permissions ?? [...p.permissions];
    for (const perm of wanted) {
      if (!isPermission(perm)) throw badRequest(`unknown permission '${perm}'; known: ${PERMISSIONS.join(', ')}`);
      if (!p.permissions.includes(perm)) throw forbidden(`cannot grant '${perm}': the calling key does not hold it`);
    }
    const key = newKeySecret(format);
    const rec: ApiKeyRecord = {
      id: newId(),
      teamId: p.teamId,
      userId: p.userId,
      name,
      keyPrefix: key.slice(0, 7),
      permissions: [...new Set(wanted)],
      createdAt: this.clock.now(),
      lastUsedAt: null,
    };
    await this.teams.insertKey({ ...rec, hash: hashKey(key), prefix: rec.keyPrefix, now: rec.createdAt });
    return { record: rec, key };
  }
}
