import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Short-lived tokens of the internal channel between API replicas and nodes, signed with the
 * installation's cluster key (HMAC-SHA256): `v1.<audience>.<expiry ms>.<signature>`. The audience is
 * a node (`nodeAudience(id)`, API -> node) or `api` (node -> API), so a token for one node is refused by another.
 */
export const INTERNAL_HEADER = 'x-sandpit-internal';
export const API_AUDIENCE = 'api';
export const nodeAudience = (nodeId: string) => `node:${nodeId}`;

const sign = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest('hex');

export function signInternalToken(key: Buffer, audience: string, ttlMs: number, now = Date.now()): string {
  const payload = `v1.${audience}.${now + ttlMs}`;
  return `${payload}.${sign(key, payload)}`;
}

export function verifyInternalToken(key: Buffer, token: string | undefined, audience: string, now = Date.now()): boolean {
  if (!token) return false;
  const i = token.lastIndexOf('.');
  if (i < 0) return false;
  const payload = token.slice(0, i);
  const [version, aud, exp] = payload.split('.');
  if (version !== 'v1' || aud !== audience || !(Number(exp) > now)) return false;
  const given = Buffer.from(token.slice(i + 1), 'hex');
  const want = Buffer.from(sign(key, payload), 'hex');
  return given.length === want.length && timingSafeEqual(given, want);
}

/** Reuses a token until half its lifetime has passed, so signing is not on every request's path. */
export class TokenCache {
  readonly #key: Buffer;
  readonly #ttlMs: number;
  readonly #tokens = new Map<string, { token: string; renewAt: number }>();
  constructor(key: Buffer, ttlMs = 60_000) {
    this.#key = key;
    this.#ttlMs = ttlMs;
  }

  for(audience: string): string {
    const now = Date.now();
    const hit = this.#tokens.get(audience);
    if (hit && hit.renewAt > now) return hit.token;
    const token = signInternalToken(this.#key, audience, this.#ttlMs, now);
    this.#tokens.set(audience, { token, renewAt: now + this.#ttlMs / 2 });
    return token;
  }
}
