import { newId } from '../../ids.ts';
import type { BuildRequest, BuildRequestStore } from '../../store/template-build-requests.ts';
import type { TemplateStore } from '../../store/templates.ts';
import type { Principal } from '../access/principal.ts';

export type { BuildRequest };

/** Requests not followed by their definition within this long are forgotten. */
const KEEP_MS = 60 * 60 * 1000;

/**
 * Template and build ids handed out ahead of a build, kept in the store until the definition comes,
 * so a restart or another API replica between the request and the steps does not lose them.
 */
export class BuildRequests {
  readonly #templates: TemplateStore;
  readonly #open: BuildRequestStore;

  constructor(templates: TemplateStore, open: BuildRequestStore) {
    this.#templates = templates;
    this.#open = open;
  }

  /** Ids for a build of template `name`: the existing template's id, or a new one. */
  async reserve(p: Principal, name: string, tags: string[], now: number): Promise<BuildRequest> {
    await this.#open.deleteOlderThan(now - KEEP_MS);
    // Two requests for one new name before either builds share the template id, as they share the name.
    const templateId = (await this.#templates.byName(p.teamId, name))?.id ?? (await this.#open.find(p.teamId, { name }))?.templateId ?? newId();
    const req: BuildRequest = { teamId: p.teamId, templateId, buildId: newId(), name, tags, at: now };
    await this.#open.insert(req);
    return req;
  }

  /** The open request of this build, or undefined (unknown, expired, another team's, or already started). */
  async get(p: Principal, templateId: string, buildId: string, now: number): Promise<BuildRequest | undefined> {
    const r = await this.#open.get(buildId);
    return r && r.teamId === p.teamId && r.templateId === templateId && now - r.at <= KEEP_MS ? r : undefined;
  }

  /** Whether the team has an open request for this template id (file uploads come before the build exists). */
  async holds(p: Principal, templateId: string): Promise<boolean> {
    return (await this.#open.find(p.teamId, { templateId })) !== undefined;
  }

  async close(buildId: string): Promise<void> {
    await this.#open.delete(buildId);
  }
}
