import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { Migrator } from 'kysely/migration';
import { openDb } from '../src/store/db.ts';
import { migrationProvider } from '../src/store/migrations.ts';
import { TeamStore } from '../src/store/teams.ts';
import { until } from './helpers/cluster-steps.ts';
import { InProcess } from './helpers/in-process.ts';
import { Api } from './helpers/server-process.ts';

function assertEnvelope(res: { status: number; body: any }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.error.code, code);
  assert.equal(typeof res.body.error.message, 'string');
}

test("migration backfill makes each existing team's first member its owner", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-migrate-'));
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new BetterSqlite3(join(dir, 'db')) }) });
  t.after(async () => {
    await db.destroy();
    await rm(dir, { recursive: true, force: true });
  });
  const migrator = new Migrator({ db, provider: migrationProvider });
  assert.equal((await migrator.migrateTo('0001_foundation')).error, undefined);
  await db.insertInto('teams').values({ id: 't1', name: 'old', limits: null, created_at: 1 }).execute();
  const user = (id: string, at: number, status = 'active') => ({ id, team_id: 't1', email: `${id}@x`, full_name: id, status, created_at: at, updated_at: at });
  await db
    .insertInto('users')
    .values([user('gone', 1, 'deactivated'), user('first', 2), user('second', 3)])
    .execute();
  assert.equal((await migrator.migrateToLatest()).error, undefined);
  const rows = await db.selectFrom('role_assignments').selectAll().execute();
  assert.equal(rows.length, 1);
  const r = rows[0]!;
  assert.deepEqual([r.user_id, r.role_name, r.scope_type, r.granted_by, r.revoked_at], ['first', 'owner', 'team', 'first', null]);
});

test('team management: members, roles, capabilities and deactivation', async (t) => {
  const env = await InProcess.start(Date.UTC(2031, 4, 1), `sp_test_${randomBytes(12).toString('hex')}`);
  t.after(() => env.destroy());
  const owner = env.api();
  const me = (await owner.get('/me')).body;
  const team = me.team_id;
  const mgmt = `/teams/${team}/management`;
  const invite = async (role: string, email = `${role}-${randomBytes(3).toString('hex')}@example.com`) => {
    const res = await owner.post(`/teams/${team}/members`, { email, full_name: `A ${role}`, role });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.headers.get('cache-control'), 'no-store');
    return { id: res.body.member.user_id as string, api: env.api(res.body.api_key.key), body: res.body };
  };

  await t.test('the owner created with the team sees every field and may do everything', async () => {
    const res = await owner.get(mgmt);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const s = res.body;
    assert.equal(s.team_id, team);
    assert.equal(s.members.length, 1);
    const m = s.members[0];
    assert.deepEqual(Object.keys(m).sort(), ['created_at', 'email', 'full_name', 'roles', 'status', 'updated_at', 'user_id']);
    assert.equal(m.user_id, me.user_id);
    assert.equal(m.status, 'active');
    assert.deepEqual(m.roles, ['owner']);
    const a = s.assignments[0];
    assert.deepEqual(Object.keys(a).sort(), ['assignment_id', 'created_at', 'email', 'granted_at', 'granted_by', 'revoked_at', 'role_name', 'scope_type', 'team_id', 'updated_at', 'user_id']);
    assert.equal(a.role_name, 'owner');
    assert.equal(a.scope_type, 'team');
    assert.equal(a.granted_by, me.user_id);
    assert.equal(a.team_id, team);
    assert.equal(a.revoked_at, null);
    assert.deepEqual(s.capabilities, {
      can_view_role_assignments: true,
      can_invite_members: true,
      can_deactivate_members: true,
      can_assign_roles: true,
      can_revoke_roles: true,
    });
    assert.deepEqual(s.mutation_options, { member_statuses: ['active', 'deactivated'], assignable_roles: ['owner', 'admin', 'member', 'billing_viewer'] });
  });

  await t.test("another team's id answers 403, whether or not it exists; no key answers 401", async () => {
    const other = await env.p.auth.createTeam('other');
    const otherApi = env.api(other.key);
    assertEnvelope(await owner.get(`/teams/${other.teamId}/management`), 403, 'forbidden');
    assertEnvelope(await owner.get(`/teams/${randomUUID()}/management`), 403, 'forbidden');
    assertEnvelope(await owner.del(`/teams/${other.teamId}/members/${other.userId}`), 403, 'forbidden');
    assertEnvelope(await otherApi.del(`/teams/${team}/members/${me.user_id}`), 403, 'forbidden');
    assertEnvelope(await new Api(env.p.url).get(mgmt), 401, 'unauthorized');
    // X-Actor-User-Id is not an identity: the other team's owner stays who its key says.
    assertEnvelope(await otherApi.get(mgmt, { 'x-actor-user-id': me.user_id }), 403, 'forbidden');
    const asOwner = await owner.get(mgmt, { 'x-actor-user-id': other.userId });
    assert.equal(asOwner.status, 200);
    assert.equal(asOwner.body.capabilities.can_deactivate_members, true);
  });

  await t.test("a member's key carries the role: no billing, no member management", async () => {
    const m = await invite('member');
    assert.deepEqual(m.body.member.roles, ['member']);
    assert.ok(!m.body.api_key.permissions.includes('billing:read'));
    assert.ok(!m.body.api_key.permissions.includes('members:manage'));
    assertEnvelope(await m.api.get('/billing/summary'), 403, 'forbidden');
    assertEnvelope(await m.api.del(`/teams/${team}/members/${me.user_id}`), 403, 'forbidden');
    const view = (await m.api.get(mgmt)).body;
    assert.deepEqual(view.capabilities, {
      can_view_role_assignments: true,
      can_invite_members: false,
      can_deactivate_members: false,
      can_assign_roles: false,
      can_revoke_roles: false,
    });
    assert.deepEqual(view.mutation_options.assignable_roles, []);
    assert.equal((await m.api.get('/sandboxes')).status, 200);

    // Revoking the role takes effect on the next request of the same key.
    assert.equal((await owner.del(`/teams/${team}/members/${m.id}/roles/member`)).status, 204);
    assertEnvelope(await m.api.get('/sandboxes'), 403, 'forbidden');
    assertEnvelope(await owner.del(`/teams/${team}/members/${m.id}/roles/member`), 404, 'not_found');
    const granted = await owner.post(`/teams/${team}/members/${m.id}/roles`, { role_name: 'billing_viewer' });
    assert.equal(granted.status, 201, JSON.stringify(granted.body));
    assert.equal(granted.body.granted_by, me.user_id);
    assert.equal(granted.body.role_name, 'billing_viewer');
    assertEnvelope(await owner.post(`/teams/${team}/members/${m.id}/roles`, { role_name: 'billing_viewer' }), 409, 'conflict');
    assertEnvelope(await owner.post(`/teams/${team}/members/${m.id}/roles`, { role_name: 'emperor' }), 400, 'bad_request');
    const after = (await owner.get(mgmt)).body;
    assert.deepEqual(after.members.find((x: any) => x.user_id === m.id).roles, ['billing_viewer']);
    const revoked = after.assignments.find((a: any) => a.user_id === m.id && a.role_name === 'member');
    assert.ok(revoked.revoked_at, 'the revoked assignment stays, with revoked_at');
  });

  await t.test('a role granted back applies to the next request of a key already in use', async () => {
    const m = await invite('member');
    assert.equal((await m.api.get('/sandboxes')).status, 200);
    assert.equal((await owner.del(`/teams/${team}/members/${m.id}/roles/member`)).status, 204);
    assertEnvelope(await m.api.get('/sandboxes'), 403, 'forbidden');
    assert.equal((await owner.post(`/teams/${team}/members/${m.id}/roles`, { role_name: 'member' })).status, 201);
    assert.equal((await m.api.get('/sandboxes')).status, 200);
  });

  await t.test('a key revoked in the store by another process is refused within a second', async () => {
    const made = await owner.post('/api-keys', { name: 'operator-revoked' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const k = env.api(made.body.key);
    assert.equal((await k.get('/sandboxes')).status, 200);
    const config = env.config();
    const other = await openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
    try {
      assert.equal(await new TeamStore(other).revokeKey(team, made.body.id, env.clock.now()), true);
    } finally {
      await other.destroy();
    }
    await until('the revoked key to be refused', async () => (await k.get('/sandboxes')).status === 401, 1000);
  });

  await t.test('a billing viewer reads the bill and nothing else', async () => {
    const v = await invite('billing_viewer');
    assert.deepEqual(v.body.api_key.permissions, ['members:read', 'billing:read']);
    assert.equal((await v.api.get('/billing/summary')).status, 200);
    assert.equal((await v.api.get(`/teams/${team}/billing/usage`)).status, 200);
    assertEnvelope(await v.api.get('/sandboxes'), 403, 'forbidden');
  });

  await t.test('deactivation cuts off a live key at once; the member stays listed', async () => {
    const m = await invite('member');
    assert.equal((await m.api.get('/me')).status, 200);
    const res = await owner.del(`/teams/${team}/members/${m.id}`);
    assert.equal(res.status, 204, JSON.stringify(res.body));
    assertEnvelope(await m.api.get('/me'), 401, 'unauthorized');
    const row = (await owner.get(mgmt)).body.members.find((x: any) => x.user_id === m.id);
    assert.equal(row.status, 'deactivated');
    assertEnvelope(await owner.del(`/teams/${team}/members/${m.id}`), 409, 'conflict');
  });

  await t.test('unknown members are 404; the last owner cannot go; admins cannot touch owners', async () => {
    assertEnvelope(await owner.del(`/teams/${team}/members/${randomUUID()}`), 404, 'not_found');
    assertEnvelope(await owner.del(`/teams/${team}/members/not-a-user`), 404, 'not_found');
    const before = (await owner.get(mgmt)).body;
    assertEnvelope(await owner.del(`/teams/${team}/members/${me.user_id}`), 409, 'conflict');
    assertEnvelope(await owner.del(`/teams/${team}/members/${me.user_id}/roles/owner`), 409, 'conflict');
    assert.deepEqual((await owner.get(mgmt)).body, before, 'nothing changed');
    assert.equal((await owner.get('/me')).status, 200);

    const admin = await invite('admin');
    assert.deepEqual((await admin.api.get(mgmt)).body.mutation_options.assignable_roles, ['admin', 'member', 'billing_viewer']);
    assertEnvelope(await admin.api.del(`/teams/${team}/members/${me.user_id}`), 403, 'forbidden');
    assertEnvelope(await admin.api.post(`/teams/${team}/members/${admin.id}/roles`, { role_name: 'owner' }), 403, 'forbidden');

    // With a second owner, the first may leave; the keys of the one who left stop working.
    assert.equal((await owner.post(`/teams/${team}/members/${admin.id}/roles`, { role_name: 'owner' })).status, 201);
    assert.equal((await admin.api.del(`/teams/${team}/members/${me.user_id}`)).status, 204);
    assertEnvelope(await owner.get('/me'), 401, 'unauthorized');
    assertEnvelope(await admin.api.del(`/teams/${team}/members/${admin.id}`), 409, 'conflict');
  });
});
