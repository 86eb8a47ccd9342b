import { createHmac, timingSafeEqual } from 'node:crypto';

const TOKEN = /^spvol_([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{43})$/;

/**
 * Tokens that open the files of one volume with the rights of the API key that asked for them (E2B's
 * volume content API takes a per-volume bearer token): `spvol_<team>.<key>.<hmac>`. Nothing is
 * stored; a token stops working when its key is revoked or its volume deleted.
 */
export class VolumeTokens {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    this.#key = key;
  }

  #sign(volumeId: string, teamId: string, keyId: string): string {
    return createHmac('sha256', this.#key).update(`volume-content:${volumeId}:${teamId}:${keyId}`).digest('base64url');
  }

  issue(volumeId: string, teamId: string, keyId: string): string {
    return `spvol_${teamId}.${keyId}.${this.#sign(volumeId, teamId, keyId)}`;
  }

  /** The team a token says it was issued to (not yet checked): where a volume named in its request is looked up. */
  claimedTeam(token: string | undefined): string | undefined {
    return TOKEN.exec(token ?? '')?.[1];
  }

  /** The team and key a token was issued to for this volume; undefined for any other token. */
  check(token: string | undefined, volumeId: string): { teamId: string; keyId: string } | undefined {
    const m = TOKEN.exec(token ?? '');
    if (!m) return undefined;
    const [, teamId, keyId, mac] = m as unknown as [string, string, string, string];
    const want = Buffer.from(this.#sign(volumeId, teamId, keyId));
    const got = Buffer.from(mac);
    return want.length === got.length && timingSafeEqual(want, got) ? { teamId, keyId } : undefined;
  }
}
