import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { ConsoleSessionStore } from '../../store/console-sessions.ts';
import { type AuthService, hashKey } from './auth.ts';
import type { Principal } from './principal.ts';

/**
 * Console sign-in: an API key is exchanged once for a random session token that the browser keeps
 * in an HttpOnly cookie, so the key itself never stays in the page. The session acts with exactly
 * the key's permissions and ends with it (revoked key, deactivated user, sign-out or expiry).
 */
export class ConsoleSessions {
  readonly #store: ConsoleSessionStore;
  readonly #auth: AuthService;
  readonly #clock: Clock;
  readonly ttlMs: number;

  constructor(store: ConsoleSessionStore, auth: AuthService, clock: Clock, ttlMs: number) {
    this.#store = store;
    this.#auth = auth;
    this.#clock = clock;
    this.ttlMs = ttlMs;
  }

  async signIn(key: string): Promise<{ token: string; principal: Principal; expiresAt: number }> {
    const principal = await this.#auth.authenticate(key);
    const token = randomBytes(32).toString('base64url');
    const now = this.#clock.now();
    const expiresAt = now + this.ttlMs;
    await this.#store.deleteExpired(now);
    await this.#store.insert({ tokenHash: hashKey(token), keyId: principal.keyId, now, expiresAt });
    return { token, principal, expiresAt };
  }

  async signOut(token: string): Promise<void> {
    await this.#store.delete(hashKey(token));
    this.#auth.changed();
  }
}
