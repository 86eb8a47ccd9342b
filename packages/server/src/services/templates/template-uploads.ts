import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';
import { ApiError, forbidden } from '../../errors.ts';
import { ARCHIVE_HASH } from '../../schemas/template.ts';
import { ArchiveTooLarge, type BuildArchives } from '../../templates/build-archives.ts';

/** How long an upload link works. */
const VALID_S = 60 * 60;
/** An upload no live template's steps name is removed once this long unused (neither written nor asked about). */
const UNUSED_KEEP_MS = 24 * 60 * 60 * 1000;

/**
 * Build-context uploads through signed links (E2B's presigned upload URLs): a link carries the
 * team, the archive hash and an expiry, so the upload needs no API key; the archive lands in
 * the team's build archives under that hash, at most a template's size.
 */
export class TemplateUploads {
  readonly #key: Buffer;
  readonly #archives: BuildArchives;
  readonly #maxBytes: number;

  constructor(key: Buffer, archives: BuildArchives, maxBytes: number) {
    this.#key = key;
    this.#archives = archives;
    this.#maxBytes = maxBytes;
  }

  #mac(teamId: string, hash: string, expires: number): string {
    return createHmac('sha256', this.#key).update(`template-upload:${teamId}:${hash}:${expires}`).digest('base64url');
  }

  /** Whether the team has uploaded archive `hash`. */
  present(teamId: string, hash: string): Promise<boolean> {
    return this.#archives.has(teamId, hash);
  }

  /** The path and query of a link for `hash` under `base`, valid for an hour from `nowMs`. */
  link(base: string, teamId: string, hash: string, nowMs: number): string {
    const expires = Math.floor(nowMs / 1000) + VALID_S;
    const query = new URLSearchParams({ expires: String(expires), signature: this.#mac(teamId, hash, expires) });
    return `${base}/template-files/${encodeURIComponent(teamId)}/${hash}?${query}`;
  }

  /**
   * Removes uploads that no live template's steps name (`inUse`: `team/hash`) and nobody has written or
   * asked about for a day, and writes cut short as long ago; answers how many went. Those named stay:
   * a template is rebuilt from its steps.
   */
  async collect(inUse: Set<string>, nowMs: number): Promise<number> {
    let removed = 0;
    for (const e of await this.#archives.entries()) {
      if (inUse.has(`${e.teamId}/${e.name}`) || nowMs - e.usedMs < UNUSED_KEEP_MS) continue;
      await this.#archives.remove(e.teamId, e.name);
      removed++;
    }
    return removed;
  }

  /** Stores an upload made through a link: 403 unless the link holds, 413 past the size limit. */
  async receive(link: { teamId: string; hash: string; expires?: string; signature?: string }, body: Readable, nowMs: number): Promise<void> {
    if (!this.#valid(link, nowMs)) throw forbidden('the upload link is not valid or has expired');
    try {
      await this.#archives.save(link.teamId, link.hash, body, this.#maxBytes);
    } catch (err) {
      if (err instanceof ArchiveTooLarge) throw new ApiError(413, 'payload_too_large', err.message);
      throw err;
    }
  }

  #valid(link: { teamId: string; hash: string; expires?: string; signature?: string }, nowMs: number): boolean {
    const { teamId, hash, expires, signature } = link;
    if (!ARCHIVE_HASH.test(hash) || !expires || !/^\d{1,12}$/.test(expires) || !signature) return false;
    if (Number(expires) * 1000 < nowMs) return false;
    const want = Buffer.from(this.#mac(teamId, hash, Number(expires)));
    const got = Buffer.from(signature);
    return want.length === got.length && timingSafeEqual(want, got);
  }
}
