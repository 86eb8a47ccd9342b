import { type Static, Type } from 'typebox';
import { DateTime } from './common.ts';

export const TeamParams = Type.Object({ team_id: Type.String({ description: 'Your team id (GET /me); any other id answers 403' }) });
export type TeamParams = Static<typeof TeamParams>;
export const MemberParams = Type.Object({ team_id: Type.String(), user_id: Type.String() });
export type MemberParams = Static<typeof MemberParams>;
export const RoleParams = Type.Object({ team_id: Type.String(), user_id: Type.String(), role_name: Type.String() });
export type RoleParams = Static<typeof RoleParams>;

const ROLE_DOC = 'owner, admin, member or billing_viewer';

export const Member = Type.Object(
  {
    user_id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    status: Type.String({ description: 'active or deactivated' }),
    created_at: DateTime,
    updated_at: DateTime,
    full_name: Type.String(),
    roles: Type.Array(Type.String(), { description: `Roles held now: ${ROLE_DOC}` }),
  },
  { $id: 'TeamMember' },
);

export const RoleAssignment = Type.Object(
  {
    assignment_id: Type.String({ format: 'uuid' }),
    user_id: Type.String({ format: 'uuid' }),
    team_id: Type.String({ format: 'uuid' }),
    granted_by: Type.String({ format: 'uuid', description: "User whose API key granted it (a team's first owner granted itself)" }),
    email: Type.String(),
    role_name: Type.String({ description: ROLE_DOC }),
    scope_type: Type.String({ description: 'Always team' }),
    granted_at: DateTime,
    created_at: DateTime,
    updated_at: DateTime,
    revoked_at: Type.Union([DateTime, Type.Null()], { description: 'Null while the role is held' }),
  },
  { $id: 'RoleAssignment' },
);

export const TeamCapabilities = Type.Object(
  {
    can_view_role_assignments: Type.Boolean(),
    can_invite_members: Type.Boolean(),
    can_deactivate_members: Type.Boolean(),
    can_assign_roles: Type.Boolean(),
    can_revoke_roles: Type.Boolean(),
  },
  { description: 'What the calling API key may do here' },
);
export type TeamCapabilities = Static<typeof TeamCapabilities>;

export const TeamManagement = Type.Object({
  team_id: Type.String({ format: 'uuid' }),
  members: Type.Array(Type.Ref('TeamMember'), { description: 'Every member, deactivated ones included' }),
  assignments: Type.Array(Type.Ref('RoleAssignment'), { description: 'Every role assignment, revoked ones included, oldest first' }),
  capabilities: TeamCapabilities,
  mutation_options: Type.Object({
    member_statuses: Type.Array(Type.String(), { description: 'Statuses a member can have' }),
    assignable_roles: Type.Array(Type.String(), { description: 'Roles the caller may grant or revoke: owners all, admins all but owner' }),
  }),
});

export const InviteBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' }),
    full_name: Type.String({ minLength: 1, maxLength: 128 }),
    role: Type.String({ description: ROLE_DOC }),
  },
  { additionalProperties: false },
);
export type InviteBody = Static<typeof InviteBody>;

export const InviteResponse = Type.Object({
  member: Type.Ref('TeamMember'),
  api_key: Type.Object({
    id: Type.String(),
    key: Type.String({ description: 'Shown once; stored only hashed' }),
    permissions: Type.Array(Type.String(), { description: "The permissions of the member's role" }),
  }),
});

export const GrantBody = Type.Object({ role_name: Type.String({ description: ROLE_DOC }) }, { additionalProperties: false });
export type GrantBody = Static<typeof GrantBody>;
