import { bumpAuthEpoch } from './auth-epoch.ts';
import type { Db } from './db.ts';
import { type ApiKeyRecord, toKey } from './teams.ts';

/** Console sessions by token hash; a session lives only as long as its key is live and its user active. */
export class ConsoleSessionStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async insert(s: { tokenHash: string; keyId: string; now: number; expiresAt: number }): Promise<void> {
    await this.db.insertInto('console_sessions').values({ token_hash: s.tokenHash, key_id: s.keyId, created_at: s.now, expires_at: s.expiresAt }).execute();
  }

  /** The key a live session stands for, and when the session ends. */
  async findKey(tokenHash: string, now: number): Promise<{ key: ApiKeyRecord; expiresAt: number } | undefined> {
    const row = await this.db
      .selectFrom('console_sessions')
      .innerJoin('api_keys', 'api_keys.id', 'console_sessions.key_id')
      .innerJoin('users', 'users.id', 'api_keys.user_id')
      .select(['api_keys.id', 'api_keys.team_id', 'api_keys.user_id', 'api_keys.name', 'api_keys.key_prefix', 'api_keys.permissions', 'api_keys.created_at', 'api_keys.last_used_at'])
      .select('console_sessions.expires_at')
      .where('console_sessions.token_hash', '=', tokenHash)
      .where('console_sessions.expires_at', '>', now)
      .where('api_keys.revoked_at', 'is', null)
      .where('users.status', '=', 'active')
      .executeTakeFirst();
    return row && { key: toKey(row), expiresAt: Number(row.expires_at) };
  }

  /** Signs a session out on every replica (their cached principals are dropped). */
  async delete(tokenHash: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const res = await tx.deleteFrom('console_sessions').where('token_hash', '=', tokenHash).executeTakeFirst();
      if (Number(res.numDeletedRows) > 0) await bumpAuthEpoch(tx);
    });
  }

  async deleteExpired(now: number): Promise<void> {
    await this.db.deleteFrom('console_sessions').where('expires_at', '<=', now).execute();
  }
}
