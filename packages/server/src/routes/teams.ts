import type { FastifyInstance } from 'fastify';
import { iso } from '../clock.ts';
import { Empty, errors } from '../schemas/common.ts';
import { GrantBody, InviteBody, InviteResponse, Member, MemberParams, RoleAssignment, RoleParams, TeamManagement, TeamParams } from '../schemas/team.ts';
import { MEMBER_STATUSES } from '../services/access/team-management.ts';
import type { AssignmentRecord, MemberRecord } from '../store/team-management.ts';
import { apiKeyHook, principal, type Services } from './context.ts';

const TEAM_DOC = "The caller is the API key's user (X-Actor-User-Id is ignored). Any team id other than the caller's answers 403 `forbidden`, whether or not that team exists.";

const memberView = (m: MemberRecord & { roles: string[] }) => ({
  user_id: m.id,
  email: m.email,
  status: m.status,
  created_at: iso(m.createdAt),
  updated_at: iso(m.updatedAt),
  full_name: m.fullName,
  roles: m.roles,
});

const assignmentView = (a: AssignmentRecord) => ({
  assignment_id: a.id,
  user_id: a.userId,
  team_id: a.teamId,
  granted_by: a.grantedBy,
  email: a.email,
  role_name: a.roleName,
  scope_type: a.scopeType,
  granted_at: iso(a.grantedAt),
  created_at: iso(a.createdAt),
  updated_at: iso(a.updatedAt),
  revoked_at: a.revokedAt === null ? null : iso(a.revokedAt),
});

export async function teamRoutes(app: FastifyInstance, s: Services) {
  const onRequest = apiKeyHook(s.auth);
  const tags = ['teams'];
  app.addSchema(Member);
  app.addSchema(RoleAssignment);

  app.get<{ Params: TeamParams }>(
    '/teams/:team_id/management',
    {
      onRequest,
      schema: {
        summary: 'Members, role assignments and what the caller may change (needs members:read)',
        description: TEAM_DOC,
        tags,
        params: TeamParams,
        response: { 200: TeamManagement, ...errors(401, 403) },
      },
    },
    async (req) => {
      const { team_id } = req.params;
      const st = await s.teamManagement.state(principal(req), team_id);
      return {
        team_id: principal(req).teamId,
        members: st.members.map(memberView),
        assignments: st.assignments.map(assignmentView),
        capabilities: st.capabilities,
        mutation_options: { member_statuses: [...MEMBER_STATUSES], assignable_roles: st.assignableRoles },
      };
    },
  );

  app.post<{ Params: TeamParams; Body: InviteBody }>(
    '/teams/:team_id/members',
    {
      onRequest,
      schema: {
        summary: 'Add a member with a role and issue their first API key (needs members:manage)',
        description: `${TEAM_DOC} The key carries the permissions of the role; 409 when an active member has the e-mail.`,
        tags,
        params: TeamParams,
        body: InviteBody,
        response: { 201: InviteResponse, ...errors(400, 401, 403, 409) },
      },
    },
    async (req, reply) => {
      const { team_id } = req.params;
      const { member, key } = await s.teamManagement.invite(principal(req), team_id, req.body);
      reply.code(201).header('cache-control', 'no-store');
      return { member: memberView(member), api_key: key };
    },
  );

  app.delete<{ Params: MemberParams }>(
    '/teams/:team_id/members/:user_id',
    {
      onRequest,
      schema: {
        summary: 'Deactivate a member: their API keys stop working at once; the member stays listed as deactivated',
        description: `${TEAM_DOC} Needs members:manage; only an owner deactivates an owner. 404: no such member in the team. 409: already deactivated, or the team's last active owner.`,
        tags,
        params: MemberParams,
        response: { 204: Empty, ...errors(401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { team_id, user_id } = req.params;
      await s.teamManagement.deactivate(principal(req), team_id, user_id);
      reply.code(204);
    },
  );

  app.post<{ Params: MemberParams; Body: GrantBody }>(
    '/teams/:team_id/members/:user_id/roles',
    {
      onRequest,
      schema: {
        summary: 'Grant a role to an active member',
        description: `${TEAM_DOC} Needs members:manage; the role must be in the caller's assignable_roles. 409: the member holds it already or is deactivated.`,
        tags,
        params: MemberParams,
        body: GrantBody,
        response: { 201: RoleAssignment, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { team_id, user_id } = req.params;
      const a = await s.teamManagement.grant(principal(req), team_id, user_id, req.body.role_name);
      reply.code(201);
      return assignmentView(a);
    },
  );

  app.delete<{ Params: RoleParams }>(
    '/teams/:team_id/members/:user_id/roles/:role_name',
    {
      onRequest,
      schema: {
        summary: 'Revoke a role; the assignment stays listed with revoked_at',
        description: `${TEAM_DOC} Needs members:manage; the role must be in the caller's assignable_roles. 404: the member does not hold it. 409: the team's last active owner.`,
        tags,
        params: RoleParams,
        response: { 204: Empty, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { team_id, user_id, role_name } = req.params;
      await s.teamManagement.revoke(principal(req), team_id, user_id, role_name);
      reply.code(204);
    },
  );
}
