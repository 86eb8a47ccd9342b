import { createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest, notFound, unauthorized, unavailable } from '../../errors.ts';
import { parseSandboxId, taggedSandboxId } from '../../ids.ts';
import type { PublishPreviewPortBody } from '../../schemas/preview-port.ts';
import type { PreviewAccess, PreviewPortRecord, PreviewPortStore } from '../../store/preview-ports.ts';
import type { SandboxRecord, SandboxStore } from '../../store/sandboxes.ts';
import type { Principal } from '../access/principal.ts';
import type { SandboxService } from '../sandboxes/sandboxes.ts';
import { ViewTokens } from './view-tokens.ts';

/** `{port}-{sandbox_id}.preview.<host>`, as /info's preview_url promises. */
export const PREVIEW_HOST = /^(\d{1,5})-((?:sb-[a-z0-9]+-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.preview\./i;

export interface PreviewTarget {
  host: string;
  port: number;
  sandboxId: string;
}

/** Credentials a preview request may carry for a private port. */
export interface PreviewCredentials {
  previewToken?: string;
  accessToken?: string;
}

/**
 * Published preview ports and the routing decision for preview traffic: strict routing (only
 * published ports), `private` ports behind a per-sandbox preview token, `legacy_public`
 * sandboxes reaching every port until they are patched to a strict mode.
 */
export class PreviewPortService {
  readonly #store: PreviewPortStore;
  readonly #sandboxStore: SandboxStore;
  readonly #sandboxes: SandboxService;
  readonly #addressOf: (sandboxId: string) => string | undefined;
  readonly #key: Buffer;
  readonly #urlFor: (port: number, taggedId: string) => string;
  readonly #viewTokens: ViewTokens;
  readonly #now: () => number;

  constructor(deps: {
    store: PreviewPortStore;
    sandboxStore: SandboxStore;
    sandboxes: SandboxService;
    addressOf: (sandboxId: string) => string | undefined;
    /** Derives preview tokens; the secrets key, so tokens survive restarts. */
    key: Buffer;
    urlFor: (port: number, taggedId: string) => string;
    now?: () => number;
  }) {
    this.#store = deps.store;
    this.#sandboxStore = deps.sandboxStore;
    this.#sandboxes = deps.sandboxes;
    this.#addressOf = deps.addressOf;
    this.#key = deps.key;
    this.#urlFor = deps.urlFor;
    this.#viewTokens = new ViewTokens(deps.key);
    this.#now = deps.now ?? Date.now;
  }

  previewToken(sandboxId: string): string {
    return `spv_${createHmac('sha256', this.#key).update(`preview:${sandboxId}`).digest('base64url')}`;
  }

  /** A token that opens only this port of the sandbox, until `expiresAt`. */
  viewToken(sandboxId: string, port: number, expiresAt: number): string {
    return this.#viewTokens.issue(sandboxId, port, expiresAt);
  }

  view(rec: SandboxRecord, p: PreviewPortRecord) {
    return {
      port: p.port,
      access: p.access,
      url: this.#urlFor(p.port, taggedSandboxId(rec.region, rec.id)),
      ...(p.access === 'private' ? { preview_token: this.previewToken(rec.id) } : {}),
      created_at: new Date(p.createdAt).toISOString(),
    };
  }

  async publish(p: Principal, rawId: string, body: PublishPreviewPortBody, now: number) {
    const rec = await this.#sandboxes.get(p, rawId);
    const access: PreviewAccess = body.access ?? (rec.previewAccess === 'private' ? 'private' : 'public');
    const existing = await this.#store.get(rec.id, body.port);
    const row: PreviewPortRecord = { sandboxId: rec.id, port: body.port, access, createdAt: existing?.createdAt ?? now };
    await this.#store.upsert(row);
    return this.view(rec, row);
  }

  async list(p: Principal, rawId: string) {
    const rec = await this.#sandboxes.get(p, rawId);
    return (await this.#store.list(rec.id)).map((r) => this.view(rec, r));
  }

  async unpublish(p: Principal, rawId: string, rawPort: string): Promise<void> {
    const rec = await this.#sandboxes.get(p, rawId);
    const port = parsePort(rawPort);
    if (!(await this.#store.delete(rec.id, port))) throw notFound(`port ${port} is not published`);
  }

  /**
   * Where preview traffic for `{port}-{id}` goes; resumes a paused sandbox. Errors are API errors.
   * `tokenOpensAnyPort`: the sandbox's access token reaches unpublished ports too (E2B's port, whose SDKs send it).
   */
  async route(port: number, rawId: string, creds: PreviewCredentials, opts: { tokenOpensAnyPort?: boolean } = {}): Promise<PreviewTarget> {
    if (!(port >= 1 && port <= 65535)) throw notFound('no such preview port');
    const rec = await this.#sandboxStore.get(parseSandboxId(rawId));
    if (!rec) throw notFound(`sandbox '${rawId}' not found`);
    if (!(opts.tokenOpensAnyPort && this.#authorized(rec, port, { accessToken: creds.accessToken }))) {
      const published = await this.#store.get(rec.id, port);
      if (!published && rec.previewAccess !== 'legacy_public') throw notFound(`port ${port} of this sandbox is not published`);
      if (published?.access === 'private' && !this.#authorized(rec, port, creds)) {
        throw unauthorized('this preview port is private: send X-Preview-Token (or ?preview_token=) or the sandbox X-Access-Token');
      }
    }
    return this.reach(rec, port);
  }

  /** The address of a port of an already authorised sandbox, resuming it if paused. */
  async reach(rec: SandboxRecord, port: number): Promise<PreviewTarget> {
    await this.#sandboxes.ensureActive(rec);
    const host = this.#addressOf(rec.id);
    if (!host) throw unavailable('the sandbox has no network');
    return { host, port, sandboxId: rec.id };
  }

  #authorized(rec: SandboxRecord, port: number, c: PreviewCredentials): boolean {
    const same = (a: string, b: string | undefined) => b !== undefined && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
    return same(this.previewToken(rec.id), c.previewToken) || same(rec.accessToken, c.accessToken) || this.#viewTokens.opens(c.previewToken, rec.id, port, this.#now());
  }
}

export function parsePort(raw: string): number {
  if (!/^\d{1,5}$/.test(raw) || Number(raw) < 1 || Number(raw) > 65535) throw badRequest(`'${raw.slice(0, 16)}' is not a port (1 to 65535)`);
  return Number(raw);
}
