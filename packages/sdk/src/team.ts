import type { HttpClient, RequestOptions } from './http.ts';
import type { InvitedMember, InviteMemberParams, RoleAssignment, TeamManagement } from './types.ts';

/** The calling key's team: members and roles. The team id comes from `GET /me` (any other team is 403). */
export class Team {
  readonly #http: HttpClient;
  /** The calling key's team id (asked of `GET /me` once). */
  readonly #teamId: (opts?: RequestOptions) => Promise<string>;

  constructor(http: HttpClient, teamId: (opts?: RequestOptions) => Promise<string>) {
    this.#http = http;
    this.#teamId = teamId;
  }

  /** Members, role assignments and what the calling key may change (needs members:read). */
  async management(opts: RequestOptions = {}): Promise<TeamManagement> {
    return this.#http.json({ method: 'GET', path: `${await this.#team(opts)}/management`, ...opts });
  }

  /** Adds a member with a role and issues their first API key (shown only here; needs members:manage). */
  async invite(params: InviteMemberParams, opts: RequestOptions = {}): Promise<InvitedMember> {
    return this.#http.json({ method: 'POST', path: `${await this.#team(opts)}/members`, body: params, ...opts });
  }

  /** Deactivates a member: their API keys stop working at once. ConflictError when already deactivated or the last owner. */
  async deactivate(userId: string, opts: RequestOptions = {}): Promise<void> {
    return this.#http.json({ method: 'DELETE', path: `${await this.#team(opts)}/members/${encodeURIComponent(userId)}`, ...opts });
  }

  async grantRole(userId: string, roleName: string, opts: RequestOptions = {}): Promise<RoleAssignment> {
    const path = `${await this.#team(opts)}/members/${encodeURIComponent(userId)}/roles`;
    return this.#http.json({ method: 'POST', path, body: { role_name: roleName }, ...opts });
  }

  async revokeRole(userId: string, roleName: string, opts: RequestOptions = {}): Promise<void> {
    const path = `${await this.#team(opts)}/members/${encodeURIComponent(userId)}/roles/${encodeURIComponent(roleName)}`;
    return this.#http.json({ method: 'DELETE', path, ...opts });
  }

  async #team(opts: RequestOptions): Promise<string> {
    return `/teams/${encodeURIComponent(await this.#teamId(opts))}`;
  }
}
