/** Permissions an API key may carry. `billing:read` is the contract's; the rest guard our routes. */
export const PERMISSIONS = [
  'sandboxes:read',
  'sandboxes:write',
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
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const isPermission = (p: string): p is Permission => (PERMISSIONS as readonly string[]).includes(p);
