import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Short-lived tokens that open one private preview port of one sandbox until they expire (a desktop's
 * live view): `spvt_<port>_<expires ms>_<hmac>`. Nothing is stored; the key signs and checks them.
 */
export class ViewTokens {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    this.#key = key;
  }

  #sign(sandboxId: string, port: number, expiresAt: number): string {
    return createHmac('sha256', this.#key).update(`view:${sandboxId}:${port}:${expiresAt}`).digest('base64url');
  }

  issue(sandboxId: string, port: number, expiresAt: number): string {
    return `spvt_${port}_${expiresAt}_${this.#sign(sandboxId, port, expiresAt)}`;
  }

  /** True when the token was issued for this sandbox and port and has not expired at `now`. */
  opens(token: string | undefined, sandboxId: string, port: number, now: number): boolean {
    const m = /^spvt_(\d{1,5})_(\d{1,15})_([A-Za-z0-9_-]{43})$/.exec(token ?? '');
    if (!m || Number(m[1]) !== port || Number(m[2]) <= now) return false;
    const want = Buffer.from(this.#sign(sandboxId, port, Number(m[2])));
    const got = Buffer.from(m[3]!);
    return want.length === got.length && timingSafeEqual(want, got);
  }
}
