import { conflict, notFound } from '../../errors.ts';
import type { TemplateRecord, TemplateStore, TemplateVersion } from '../../store/templates.ts';
import type { CuratedTemplates } from './curated-templates.ts';
import type { TemplateCopies } from './template-copies.ts';
import { splitTagged } from './template-tags.ts';
import { BASE_TEMPLATE, TEMPLATE_UUID, type TemplateInfo, versionInfo } from './template-info.ts';

/** Resolves template references (platform/*, a team's by UUID or name) to what sandboxes start from. */
export class TemplateCatalog {
  readonly #store: TemplateStore;
  readonly curated: CuratedTemplates;
  /** Template id -> exec's default working dir, so exec does not read the store each time. */
  readonly #workdirs = new Map<string, string | undefined>();

  /** On a node: templates built on other nodes are copied here on first use. */
  readonly #copies: TemplateCopies | undefined;

  constructor(store: TemplateStore, curated: CuratedTemplates, copies?: TemplateCopies) {
    this.#store = store;
    this.curated = curated;
    this.#copies = copies;
  }

  /** A template the team may start sandboxes from (or build on): platform/*, or its own by UUID or name. */
  async resolve(teamId: string, ref: string | undefined): Promise<TemplateInfo> {
    const id = ref ?? BASE_TEMPLATE;
    if (id === BASE_TEMPLATE) return this.curated.baseInfo();
    if (id.startsWith('platform/')) {
      if (!this.curated.has(id)) throw notFound(`template '${id.slice(0, 128)}' not found`);
      return this.#info(id, await this.curated.ensure(id));
    }
    if (id.includes(':')) return this.#tagged(teamId, id);
    const t = await this.find(teamId, id);
    if (!t.version) {
      if (t.status === 'building') throw conflict(`template '${t.name}' is still building; retry when its status is ready`);
      throw conflict(`template '${t.name}' has no successful build (${t.error ?? t.status})`);
    }
    return this.#info(t.id, this.#copies ? await this.#copies.local(t) : t.version);
  }

  /** `name:tag`: the version the tagged build made (not cached as the template's workdir: that is the current version's). */
  async #tagged(teamId: string, ref: string): Promise<TemplateInfo> {
    const { name, tag } = splitTagged(ref);
    const t = await this.find(teamId, name);
    const row = await this.#store.tag(t.id, tag!);
    if (!row?.version) throw notFound(`template '${t.name}' has no tag '${tag}'`);
    return versionInfo(t.id, this.#copies ? await this.#copies.local({ ...t, version: row.version }) : row.version);
  }

  /** The team's own template by UUID or name. */
  async find(teamId: string, ref: string): Promise<TemplateRecord> {
    const t = TEMPLATE_UUID.test(ref) ? await this.#store.get(ref) : await this.#store.byName(teamId, ref);
    if (!t || t.teamId !== teamId) throw notFound(`template '${ref.slice(0, 128)}' not found`);
    return t;
  }

  /** Exec's default working directory in sandboxes of a template (its last workdir step). */
  async workdir(templateId: string): Promise<string | undefined> {
    if (this.#workdirs.has(templateId)) return this.#workdirs.get(templateId);
    if (!TEMPLATE_UUID.test(templateId)) return undefined;
    const t = await this.#store.get(templateId);
    this.#workdirs.set(templateId, t?.version?.workdir);
    return t?.version?.workdir;
  }

  /** A team build stored a new version of the template. */
  versionChanged(templateId: string, workdir: string | undefined): void {
    this.#workdirs.set(templateId, workdir);
  }

  forget(templateId: string): void {
    this.#workdirs.delete(templateId);
  }

  /** Live team templates with a warm pool, for the pool to keep filled. */
  async pooled(): Promise<{ teamId: string; target: number; info: TemplateInfo }[]> {
    return Promise.all(
      (await this.#store.listPooled()).map(async (t) => ({ teamId: t.teamId, target: t.definition.warmPool, info: this.#info(t.id, this.#copies ? await this.#copies.local(t) : t.version!) })),
    );
  }

  #info(id: string, v: TemplateVersion): TemplateInfo {
    this.#workdirs.set(id, v.workdir);
    return versionInfo(id, v);
  }
}
