import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Who changed what: one row per mutating API call, append-only (the API has no route that edits or
 * deletes one; rows older than the retention setting are pruned). Keys that could manage keys
 * (admin keys) get the new `audit:read` permission, which members' roles do not allow.
 */
export const auditLog: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('audit_log')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('actor_type', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text')
      .addColumn('user_id', 'text')
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('resource_type', 'text', (c) => c.notNull())
      .addColumn('resource_id', 'text')
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('route', 'text', (c) => c.notNull())
      .addColumn('status', 'integer', (c) => c.notNull())
      .addColumn('ip', 'text', (c) => c.notNull())
      .addColumn('user_agent', 'text')
      .addColumn('trace_id', 'text')
      .execute();
    await db.schema.createIndex('audit_log_team_at').on('audit_log').columns(['team_id', 'at', 'id']).execute();
    await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
    await grantToKeyManagers(db, 'audit:read');
  },
};

/** Adds `permission` to every key that holds `keys:manage` (the keys of owners and admins). */
export async function grantToKeyManagers(db: Kysely<any>, permission: string): Promise<void> {
  const keys: { id: string; permissions: string }[] = await db.selectFrom('api_keys').select(['id', 'permissions']).execute();
  for (const k of keys) {
    const perms: string[] = JSON.parse(k.permissions);
    if (!perms.includes('keys:manage') || perms.includes(permission)) continue;
    await db
      .updateTable('api_keys')
      .set({ permissions: JSON.stringify([...perms, permission]) })
      .where('id', '=', k.id)
      .execute();
  }
}
