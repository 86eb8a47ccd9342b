/** Permissions an API key may carry. `billing:read` is the contract's; the rest guard our routes. */
export const PERMISSIONS = [
  'sandboxes:read',
  'sandboxes:write',
  'sandboxes:move',
  'snapshots:read',
  'snapshots:write',
  'templates:read',
  'templates:write',
  'secrets:read',
  'secrets:write',
  'keys:manage',
  'members:read',
  'members:manage',
  'billing:read',
  'audit:read',
  'webhooks:manage',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const isPermission = (p: string): p is Permission => (PERMISSIONS as readonly string[]).includes(p);

/** Team-scoped roles. A key acts with its own permissions narrowed to those of its user's roles. */
export const ROLES = ['owner', 'admin', 'member', 'billing_viewer'] as const;
export type Role = (typeof ROLES)[number];
export const isRole = (r: string): r is Role => (ROLES as readonly string[]).includes(r);

/** Members run sandboxes but cannot move them between nodes, manage the team, its keys or see its bill. */
const MEMBER_EXCLUDED: readonly Permission[] = ['sandboxes:move', 'keys:manage', 'members:manage', 'billing:read', 'audit:read', 'webhooks:manage'];

const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: PERMISSIONS,
  member: PERMISSIONS.filter((p) => !MEMBER_EXCLUDED.includes(p)),
  billing_viewer: ['billing:read', 'members:read'],
};

/** Everything the given roles allow (unknown role names allow nothing). */
export function permissionsOfRoles(roles: readonly string[]): Set<Permission> {
  return new Set(roles.filter(isRole).flatMap((r) => ROLE_PERMISSIONS[r]));
}
