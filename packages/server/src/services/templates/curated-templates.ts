import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import { conflict } from '../../errors.ts';
import type { TemplateStep } from '../../schemas/template.ts';
import type { TemplateRecord, TemplateVersion } from '../../store/templates.ts';
import { ensureBaseTemplate } from '../../templates/base-template.ts';
import type { BuildProgress } from '../../templates/build-base.ts';
import { acquireLock } from '../../templates/build-lock.ts';
import { LayerCache } from '../../templates/layer-cache.ts';
import { type BuildDeps, BuildFailure, BuildLog, runBuild } from '../../templates/run-build.ts';
import { readJson, writeFileAtomic } from '../../optional-files.ts';
import { BASE_RESOURCES, BASE_TEMPLATE, DEFAULT_READY_TIMEOUT_S, type TemplateInfo } from './template-info.ts';

const CURATED_DIR = new URL('../../templates/curated/', import.meta.url).pathname;
const TEMPLATES_DIR = new URL('../../templates/', import.meta.url).pathname;

/** A copy step of a recipe file may name its content as a file under src/templates instead of inlining it. */
type RecipeStep = TemplateStep | (Omit<Extract<TemplateStep, { type: 'copy' }>, 'content_base64'> & { source: string });

interface CuratedRecipe {
  name: string;
  description: string;
  steps: TemplateStep[];
  start_cmd?: string;
  ready_cmd?: string;
  /** Default DEFAULT_READY_TIMEOUT_S; a service that warms up kernels before it answers needs longer on a loaded host. */
  ready_timeout_s?: number;
}

export interface CuratedTemplatesDeps {
  imageDir: string;
  clock: Clock;
  log: Logger;
  build: BuildDeps;
  /** Unset: the host's configured Debian mirror. */
  debianMirror?: string;
  onProgress?: (p: BuildProgress) => void;
}

/**
 * platform/base and the curated platform/* templates: built on first use by the same pipeline as
 * team templates, cached under the image dir by recipe hash and shared by installations (a file lock
 * keeps two processes from building one twice).
 */
export class CuratedTemplates {
  readonly deps: CuratedTemplatesDeps;
  #base: Promise<string> | undefined;
  readonly #recipes = new Map<string, CuratedRecipe>();
  readonly #builds = new Map<string, Promise<TemplateVersion>>();
  readonly #ready = new Map<string, TemplateVersion>();
  readonly #cache: LayerCache;

  constructor(deps: CuratedTemplatesDeps) {
    this.deps = deps;
    this.#cache = new LayerCache(join(deps.imageDir, 'templates', 'layers'));
  }

  /** Loads the curated recipes. */
  async init(): Promise<void> {
    for (const f of (await readdir(CURATED_DIR)).filter((n) => n.endsWith('.json')).sort()) {
      const r = JSON.parse(await readFile(join(CURATED_DIR, f), 'utf8')) as Omit<CuratedRecipe, 'steps'> & { steps: RecipeStep[] };
      // Inlined here, so the recipe hash (the cache key) changes with the files' content.
      const steps = await Promise.all(r.steps.map(inlineSource));
      this.#recipes.set(r.name, { ...r, steps });
    }
  }

  /** Starts (or joins) the base template build. */
  base(): Promise<string> {
    if (!this.#base) {
      this.#base = ensureBaseTemplate(this.deps.imageDir, { mirror: this.deps.debianMirror, onProgress: this.deps.onProgress });
      this.#base.catch(() => {
        this.#base = undefined;
      });
    }
    return this.#base;
  }

  async baseInfo(): Promise<TemplateInfo> {
    const rootfs = await this.base();
    return { id: BASE_TEMPLATE, rootfs, layers: [], resources: { ...BASE_RESOURCES }, env: {}, readyTimeoutS: DEFAULT_READY_TIMEOUT_S, versionKey: rootfs };
  }

  has(name: string): boolean {
    return this.#recipes.has(name);
  }

  /** The built version of a curated template, building it on first use. */
  ensure(name: string): Promise<TemplateVersion> {
    const ready = this.#ready.get(name);
    if (ready) return Promise.resolve(ready);
    let p = this.#builds.get(name);
    if (!p) {
      p = this.#build(name).then((v) => {
        this.#ready.set(name, v);
        return v;
      });
      p.catch(() => undefined).finally(() => this.#builds.delete(name));
      this.#builds.set(name, p);
    }
    return p;
  }

  async #file(name: string): Promise<{ file: string; recipe: CuratedRecipe; baseRoot: string }> {
    const recipe = this.#recipes.get(name)!;
    const baseRoot = await this.base();
    const hash = createHash('sha256').update(baseRoot).update(JSON.stringify(recipe)).digest('hex').slice(0, 16);
    return { file: join(this.deps.imageDir, 'templates', 'curated', `${name.replace('/', '-')}-${hash}.json`), recipe, baseRoot };
  }

  async #build(name: string): Promise<TemplateVersion> {
    const { imageDir } = this.deps;
    const { file, recipe, baseRoot } = await this.#file(name);
    const cached = await readJson<TemplateVersion>(file);
    if (cached) return cached;
    await mkdir(join(imageDir, 'templates', 'curated'), { recursive: true });
    const release = await acquireLock(`${file}.lock`);
    try {
      const again = await readJson<TemplateVersion>(file);
      if (again) return again;
      const log = new BuildLog(join(imageDir, 'templates', 'curated', `${name.replace('/', '-')}.log`));
      log.on('event', (ev) => ev.line !== undefined && this.deps.log.info({ template: name }, ev.line));
      const { version } = await runBuild(this.deps.build, {
        teamId: 'platform',
        base: { key: baseRoot, baseRoot, layers: [], env: {}, resources: BASE_RESOURCES },
        steps: recipe.steps,
        startCmd: recipe.start_cmd,
        readyCmd: recipe.ready_cmd,
        readyTimeoutS: recipe.ready_timeout_s ?? DEFAULT_READY_TIMEOUT_S,
        cache: this.#cache,
        log,
      });
      await writeFileAtomic(file, JSON.stringify(version));
      return version;
    } catch (err) {
      this.deps.log.error({ template: name, err: String(err) }, 'curated template build failed');
      throw err instanceof BuildFailure ? conflict(`template '${name}' could not be built: ${err.message}`) : err;
    } finally {
      await release();
    }
  }

  /** Curated templates as list items; status pending until first built. */
  async views(): Promise<TemplateRecord[]> {
    const out: TemplateRecord[] = [];
    const now = this.deps.clock.now();
    for (const [name, r] of this.#recipes) {
      const version = this.#ready.get(name) ?? (await readJson<TemplateVersion>((await this.#file(name)).file)) ?? null;
      if (version) this.#ready.set(name, version);
      out.push({
        id: name,
        teamId: '',
        name,
        definition: { base: BASE_TEMPLATE, steps: r.steps, readyTimeoutS: r.ready_timeout_s ?? DEFAULT_READY_TIMEOUT_S, warmPool: 0 },
        status: version ? 'ready' : this.#builds.has(name) ? 'building' : 'pending',
        error: null,
        version,
        capture: null,
        latestBuildId: null,
        createdAt: now,
        updatedAt: now,
        deletedAt: null,
      });
    }
    return out;
  }
}

async function inlineSource(step: RecipeStep): Promise<TemplateStep> {
  if (!('source' in step)) return step;
  const { source, ...rest } = step;
  return { ...rest, content_base64: (await readFile(join(TEMPLATES_DIR, source))).toString('base64') };
}
