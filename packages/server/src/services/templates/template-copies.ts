import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { TemplateStep } from '../../schemas/template.ts';
import type { TemplateRecord, TemplateVersion } from '../../store/templates.ts';
import type { LayerCache } from '../../templates/layer-cache.ts';
import { type BuildDeps, BuildLog, runBuild } from '../../templates/run-build.ts';
import { imageBase, type ImageTemplateDeps } from './image-templates.ts';
import { BASE_RESOURCES, buildBaseOf, type TemplateInfo } from './template-info.ts';

export interface TemplateCopiesDeps {
  /** This node's own directories: a version whose files lie elsewhere was built on another node. */
  ownDirs: string[];
  dataDir: string;
  build: BuildDeps;
  images: ImageTemplateDeps;
  cache: LayerCache;
  /** The version a template builds on (platform/base or another of the team's), as this node has it. */
  resolveBase: (teamId: string, ref: string) => Promise<TemplateInfo>;
  log: Logger;
}

/**
 * A node's copies of team templates built on other nodes. A template reaches a node by its recipe:
 * the first sandbox of it here rebuilds the version from the stored definition through this node's
 * content-addressed layer cache (an image is pulled again by digest), once; later sandboxes use the copy.
 */
export class TemplateCopies {
  readonly #deps: TemplateCopiesDeps;
  /** Stored version key -> this node's copy. */
  readonly #copies = new Map<string, Promise<TemplateVersion>>();
  readonly #done = new Set<string>();

  constructor(deps: TemplateCopiesDeps) {
    this.#deps = deps;
  }

  /** The version as this node has it: the stored one when its files are here, else the copy (built on first use). */
  local(t: TemplateRecord): Promise<TemplateVersion> {
    const v = t.version!;
    if (this.#isLocal(v)) return Promise.resolve(v);
    let copy = this.#copies.get(v.key);
    if (!copy) {
      copy = this.#rebuild(t, v);
      this.#copies.set(v.key, copy);
      copy.then(
        () => this.#done.add(v.key),
        () => this.#copies.delete(v.key),
      );
    }
    return copy;
  }

  /** Stored version keys this node holds a copy of (reported to placement). */
  held(): string[] {
    return [...this.#done];
  }

  #isLocal(v: TemplateVersion): boolean {
    const own = (p: string) => this.#deps.ownDirs.some((d) => p.startsWith(`${d}/`)) && existsSync(p);
    return own(v.baseRoot) && v.layers.every(own);
  }

  async #rebuild(t: TemplateRecord, v: TemplateVersion): Promise<TemplateVersion> {
    const deps = this.#deps;
    const def = t.definition;
    const name = createHash('sha256').update(v.key).digest('hex').slice(0, 16);
    const log = new BuildLog(join(deps.dataDir, 'templates', 'builds', `copy-${name}.log`));
    deps.log.info({ template: t.id }, 'template built on another node: rebuilding it here from its recipe');
    log.line(`copy of template '${t.name}' (version ${name}), rebuilt from its recipe on this node`);
    try {
      const base = def.fromImage ? await imageBase(deps.images, t.teamId, def, { ...BASE_RESOURCES }, log) : buildBaseOf(await deps.resolveBase(t.teamId, def.base));
      const { version } = await runBuild(deps.build, {
        teamId: t.teamId,
        base,
        steps: def.steps as TemplateStep[],
        startCmd: def.startCmd,
        readyCmd: def.readyCmd,
        readyTimeoutS: def.readyTimeoutS,
        cache: deps.cache,
        log,
      });
      log.finish('ready');
      return version;
    } catch (err) {
      log.finish('failed', (err as Error).message);
      throw err;
    } finally {
      await log.flushed();
    }
  }
}
