import { newId } from '../../ids.ts';
import type { TemplateStore } from '../../store/templates.ts';
import type { Principal } from '../access/principal.ts';

/** A build asked for before its definition arrives (E2B's `POST /v3/templates`, then file uploads, then the steps). */
export interface BuildRequest {
  teamId: string;
  templateId: string;
  buildId: string;
  name: string;
  tags: string[];
  at: number;
}

/** Requests not followed by their definition within this long are forgotten. */
const KEEP_MS = 60 * 60 * 1000;

/**
 * Template and build ids handed out ahead of a build, kept in memory until the definition comes
 * (a restart forgets them: the client's trigger then answers 404 and it asks again).
 */
export class BuildRequests {
  readonly #store: TemplateStore;
  readonly #open = new Map<string, BuildRequest>();

  constructor(store: TemplateStore) {
    this.#store = store;
  }

  /** Ids for a build of template `name`: the existing template's id, or a new one. */
  async reserve(p: Principal, name: string, tags: string[], now: number): Promise<BuildRequest> {
    this.#expire(now);
    const existing = await this.#store.byName(p.teamId, name);
    const req: BuildRequest = { teamId: p.teamId, templateId: existing?.id ?? this.#reservedId(p.teamId, name) ?? newId(), buildId: newId(), name, tags, at: now };
    this.#open.set(req.buildId, req);
    return req;
  }

  /** The open request of this build, or undefined (unknown, another team's, or already started). */
  get(p: Principal, templateId: string, buildId: string): BuildRequest | undefined {
    const r = this.#open.get(buildId);
    return r && r.teamId === p.teamId && r.templateId === templateId ? r : undefined;
  }

  /** Whether the team has an open request for this template id (file uploads come before the build exists). */
  holds(p: Principal, templateId: string): boolean {
    return [...this.#open.values()].some((r) => r.teamId === p.teamId && r.templateId === templateId);
  }

  close(buildId: string): void {
    this.#open.delete(buildId);
  }

  /** Two requests for one new name before either builds share the template id, as they share the name. */
  #reservedId(teamId: string, name: string): string | undefined {
    return [...this.#open.values()].find((r) => r.teamId === teamId && r.name === name)?.templateId;
  }

  #expire(now: number): void {
    for (const [id, r] of this.#open) if (now - r.at > KEEP_MS) this.#open.delete(id);
  }
}
