import type { Clock } from '../../clock.ts';
import { TAG } from '../../templates/images/image-ref.ts';
import { badRequest, notFound } from '../../errors.ts';
import type { TemplateStore, TemplateTag } from '../../store/templates.ts';
import type { Principal } from '../access/principal.ts';
import type { TemplateCatalog } from './template-catalog.ts';

export const LATEST = 'latest';

/** `name:tag` split at its last colon (template names have none); `tag` absent when there is no colon. */
export function splitTagged(ref: string): { name: string; tag?: string } {
  const at = ref.lastIndexOf(':');
  if (at < 0) return { name: ref };
  const name = ref.slice(0, at);
  const tag = ref.slice(at + 1);
  if (name === '') throw badRequest(`'${ref.slice(0, 160)}' has no template name before ':'`);
  checkTag(tag);
  return { name, tag };
}

export function checkTag(tag: string): void {
  if (!TAG.test(tag)) throw badRequest(`'${tag.slice(0, 160)}' is not a tag: 1 to 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'`);
}

/**
 * Names for builds of a team's templates (E2B's tags). A build's tags are set when it is ready;
 * `latest` always follows the newest ready build. A tag keeps the version its build made, so
 * `name:tag` starts sandboxes of that build after newer ones (TemplateCatalog.resolve).
 */
export class TemplateTags {
  readonly #store: TemplateStore;
  readonly #catalog: TemplateCatalog;
  readonly #clock: Clock;

  constructor(store: TemplateStore, catalog: TemplateCatalog, clock: Clock) {
    this.#store = store;
    this.#catalog = catalog;
    this.#clock = clock;
  }

  /** Tags (plain, or `name:tag` of the same template) added to the build `target` (`name[:tag]`, `latest` by default) names. */
  async assign(p: Principal, target: string, tags: string[]): Promise<{ buildId: string; tags: string[] }> {
    const { name, tag } = splitTagged(target);
    if (tags.length === 0) throw badRequest('tags is empty: name at least one');
    const plain = tags.map((t) => {
      if (!t.includes(':')) {
        checkTag(t);
        return t;
      }
      const other = splitTagged(t);
      if (other.name !== name || other.tag === undefined) throw badRequest(`'${t.slice(0, 160)}' names another template than '${name.slice(0, 128)}'`);
      return other.tag;
    });
    const t = await this.#catalog.find(p.teamId, name);
    const source = await this.#store.tag(t.id, tag ?? LATEST);
    if (!source) throw notFound(`template '${t.name}' has no tag '${tag ?? LATEST}'`);
    await this.#store.putTags(t.id, source.buildId, source.version, [...new Set(plain)], this.#clock.now());
    return { buildId: source.buildId, tags: plain };
  }

  async remove(p: Principal, name: string, tags: string[]): Promise<void> {
    for (const tag of tags) checkTag(tag);
    const t = await this.#catalog.find(p.teamId, name);
    await this.#store.removeTags(t.id, tags);
  }

  async list(p: Principal, ref: string): Promise<TemplateTag[]> {
    return this.#store.tags((await this.#catalog.find(p.teamId, ref)).id);
  }
}
