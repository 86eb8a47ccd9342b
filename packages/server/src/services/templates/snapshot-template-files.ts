import { basename, dirname } from 'node:path';
import { conflict } from '../../errors.ts';
import { exists } from '../../optional-files.ts';
import type { TemplateFiles } from '../../runtime/driver.ts';
import type { TemplateStore } from '../../store/templates.ts';
import type { CuratedTemplates } from './curated-templates.ts';
import type { TemplateCopies } from './template-copies.ts';
import { TEMPLATE_UUID } from './template-info.ts';

export interface SnapshotTemplateDeps {
  store: TemplateStore;
  curated: CuratedTemplates;
  copies: TemplateCopies;
  /** This node's own directories: files elsewhere (another node's data dir on the same machine) are not this node's. */
  ownDirs: string[];
}

/** A step layer's identity: layers are content-addressed (`<cache>/<key>/root`), so the same key is the same files on every node. */
const layerKey = (p: string) => `${basename(dirname(p))}/${basename(p)}`;

/**
 * This node's paths of the template files a snapshot or paused sandbox from another node stacks on: the same
 * paths when they are here (platform templates live in the shared, content-addressed image cache;
 * a missing one is built), else this node's copy of the team template, rebuilt from its recipe,
 * when it was made from the template's current version (the same layer keys).
 */
export async function snapshotTemplateFiles(deps: SnapshotTemplateDeps, templateId: string | null, t: TemplateFiles): Promise<TemplateFiles> {
  const own = (p: string) => deps.ownDirs.some((d) => p.startsWith(`${d}/`)) && exists(p);
  const here = async () => (await Promise.all([t.root, ...t.layers].map(own))).every(Boolean);
  if (await here()) return t;
  if (templateId?.startsWith('platform/') && deps.curated.has(templateId)) {
    await deps.curated.ensure(templateId);
    if (await here()) return t;
  }
  const rec = templateId && TEMPLATE_UUID.test(templateId) ? await deps.store.get(templateId) : undefined;
  const v = rec?.version;
  if (rec && v && v.layers.length === t.layers.length && v.layers.every((l, i) => layerKey(l) === layerKey(t.layers[i]!))) {
    const local = await deps.copies.local(rec);
    return { root: local.baseRoot, layers: local.layers };
  }
  throw conflict(`the template version it was made from is not on this node and is no longer the current version of template '${templateId ?? 'unknown'}', so it cannot be rebuilt here`);
}
