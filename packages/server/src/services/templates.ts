import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { badRequest, conflict, forbidden, notFound, tooMany } from '../errors.ts';
import { newId } from '../ids.ts';
import { startAndWaitReady } from '../runtime/templates/boot.ts';
import { ensureBaseTemplate } from '../runtime/templates/base-template.ts';
import { acquireLock } from '../runtime/templates/build-lock.ts';
import { LayerCache } from '../runtime/templates/layer-cache.ts';
import type { CreateTemplateBody, TemplateStep } from '../schemas/template.ts';
import type { ResourcesRecord } from '../store/sandboxes.ts';
import type { BuildRecord, TemplateDefinition, TemplateRecord, TemplateStore, TemplateVersion } from '../store/templates.ts';
import type { TeamStore } from '../store/teams.ts';
import type { SandboxSpec } from '../runtime/driver.ts';
import type { AgentPool } from './agents.ts';
import type { Principal } from './auth.ts';
import type { PreparedNetwork } from './network.ts';
import { type BuildBase, type BuildDeps, BuildFailure, BuildLog, type BuildLogEvent, runBuild } from './template-builds.ts';
import { envInt } from '../config.ts';
import { buildSource, imageBase, type ImageTemplateDeps } from './image-templates.ts';

/** What a sandbox of a template starts from. */
export interface TemplateInfo {
  /** UUID, or the curated name. */
  id: string;
  rootfs: string;
  /** Step layers above rootfs, top first. */
  layers: string[];
  resources: ResourcesRecord;
  env: Record<string, string>;
  workdir?: string;
  startCmd?: string;
  readyCmd?: string;
  readyTimeoutS: number;
  /** Identity of the built version (warm pools hold sandboxes of one version). */
  versionKey: string;
}

/**
 * The engine spec of a sandbox of this template version on its prepared network: caller env wins
 * over the template's and the platform's CA variables; secret tokens (checked not to collide) over all.
 */
export function templateSandboxSpec(id: string, info: TemplateInfo, net: PreparedNetwork | undefined, env: Record<string, string> = {}): SandboxSpec {
  return {
    id,
    templateRoot: info.rootfs,
    templateLayers: info.layers,
    resources: { vcpuCount: info.resources.vcpu_count, memoryMib: info.resources.memory_mib, diskMib: info.resources.disk_mib },
    env: { ...info.env, ...net?.baseEnv, ...env, ...net?.secretEnv },
    hostname: 'sandbox',
    netnsPath: net?.netnsPath,
    netConfig: net?.netConfig,
    mounts: net?.mounts,
  };
}

export type BuildProgress = { phase: string; done: number; total: number; line?: string };

export const BASE_TEMPLATE = 'platform/base';
const BASE_RESOURCES: ResourcesRecord = { vcpu_count: 1, memory_mib: 1024, disk_mib: 4096 };
const DEFAULT_READY_TIMEOUT_S = 60;
const CURATED_DIR = new URL('../runtime/templates/curated/', import.meta.url).pathname;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface TemplateLimits {
  /** Concurrent builds per team (teams.limits max_concurrent_builds overrides). */
  maxBuilds: number;
  /** Live templates per team (teams.limits max_templates overrides). */
  maxTemplates: number;
  maxTemplateBytes: number;
}

/** Template settings from the environment, with working defaults. */
export function templateLimits(env: NodeJS.ProcessEnv): TemplateLimits {
  const int = (name: string, fallback: number) => envInt(env, name, fallback);
  return {
    maxBuilds: int('SANDPIT_MAX_CONCURRENT_BUILDS', 2),
    maxTemplates: int('SANDPIT_MAX_TEMPLATES', 50),
    maxTemplateBytes: int('SANDPIT_TEMPLATE_MAX_MIB', 8192) * 1024 * 1024,
  };
}

export interface TemplateServiceDeps {
  imageDir: string;
  dataDir: string;
  store: TemplateStore;
  teams: TeamStore;
  clock: Clock;
  log: Logger;
  limits: TemplateLimits;
  agents: AgentPool;
  build: Omit<BuildDeps, 'maxTemplateBytes' | 'agents'>;
  onProgress?: (p: BuildProgress) => void;
  /** Pulls images for from_image and Dockerfile FROM image builds. */
  images: ImageTemplateDeps;
  /** Told when a template's version changes or it is deleted (set once the capture service is wired). */
  captures?: { settle(templateId: string): void };
}

interface CuratedRecipe {
  name: string;
  description: string;
  steps: TemplateStep[];
  start_cmd?: string;
  ready_cmd?: string;
}

/** Resolves template references, builds templates (team and curated ones), and starts template processes in sandboxes. */
export class TemplateService {
  readonly imageDir: string;
  readonly deps: TemplateServiceDeps;
  #base: Promise<string> | undefined;
  readonly #curated = new Map<string, CuratedRecipe>();
  readonly #curatedBuilds = new Map<string, Promise<TemplateVersion>>();
  readonly #curatedReady = new Map<string, TemplateVersion>();
  readonly #building = new Map<string, number>();
  /** Builds of this process, with their live logs, kept a minute after they end for followers. */
  readonly #live = new Map<string, { build: BuildRecord; log: BuildLog }>();
  /** Template id -> exec's default working dir, so exec does not read the store each time. */
  readonly #workdirs = new Map<string, string | undefined>();
  readonly #userCache: LayerCache;
  readonly #curatedCache: LayerCache;

  constructor(deps: TemplateServiceDeps) {
    this.deps = deps;
    this.imageDir = deps.imageDir;
    // Team layers live with the installation's data; curated ones are shared like platform/base.
    this.#userCache = new LayerCache(join(deps.dataDir, 'templates', 'layers'));
    this.#curatedCache = new LayerCache(join(deps.imageDir, 'templates', 'layers'));
  }

  /** Loads the curated recipes and settles builds a previous server left unfinished. */
  async init(): Promise<void> {
    for (const f of (await readdir(CURATED_DIR)).filter((n) => n.endsWith('.json')).sort()) {
      const r = JSON.parse(await readFile(join(CURATED_DIR, f), 'utf8')) as CuratedRecipe;
      this.#curated.set(r.name, r);
    }
    const now = this.deps.clock.now();
    for (const b of await this.deps.store.unfinishedBuilds()) {
      b.status = 'failed';
      b.error = 'build_failed: the server restarted during the build';
      b.finishedAt = now;
      await this.deps.store.saveBuild(b);
      const t = await this.deps.store.get(b.templateId);
      if (t && t.status === 'building') {
        t.status = 'failed';
        t.error = b.error;
        t.updatedAt = now;
        await this.deps.store.save(t);
      }
    }
  }

  /** Starts (or joins) the base template build. */
  base(): Promise<string> {
    if (!this.#base) {
      this.#base = ensureBaseTemplate(this.imageDir, this.deps.onProgress);
      this.#base.catch(() => {
        this.#base = undefined;
      });
    }
    return this.#base;
  }

  async #baseInfo(): Promise<TemplateInfo> {
    const rootfs = await this.base();
    return { id: BASE_TEMPLATE, rootfs, layers: [], resources: { ...BASE_RESOURCES }, env: {}, readyTimeoutS: DEFAULT_READY_TIMEOUT_S, versionKey: rootfs };
  }

  /** A template the team may start sandboxes from (or build on): platform/*, or its own by UUID or name. */
  async resolve(teamId: string, ref: string | undefined): Promise<TemplateInfo> {
    const id = ref ?? BASE_TEMPLATE;
    if (id === BASE_TEMPLATE) return this.#baseInfo();
    if (id.startsWith('platform/')) {
      if (!this.#curated.has(id)) throw notFound(`template '${id.slice(0, 128)}' not found`);
      return this.#infoOf(id, await this.#ensureCurated(id));
    }
    const t = await this.#find(teamId, id);
    if (!t.version) {
      if (t.status === 'building') throw conflict(`template '${t.name}' is still building; retry when its status is ready`);
      throw conflict(`template '${t.name}' has no successful build (${t.error ?? t.status})`);
    }
    return this.#infoOf(t.id, t.version);
  }

  #infoOf(id: string, v: TemplateVersion): TemplateInfo {
    this.#workdirs.set(id, v.workdir);
    return {
      id,
      rootfs: v.baseRoot,
      layers: v.layers,
      resources: { ...BASE_RESOURCES },
      env: v.env,
      readyTimeoutS: v.readyTimeoutS,
      versionKey: v.key,
      ...(v.workdir ? { workdir: v.workdir } : {}),
      ...(v.startCmd ? { startCmd: v.startCmd } : {}),
      ...(v.readyCmd ? { readyCmd: v.readyCmd } : {}),
    };
  }

  async #find(teamId: string, ref: string): Promise<TemplateRecord> {
    const t = UUID.test(ref) ? await this.deps.store.get(ref) : await this.deps.store.byName(teamId, ref);
    if (!t || t.teamId !== teamId) throw notFound(`template '${ref.slice(0, 128)}' not found`);
    return t;
  }

  /** Exec's default working directory in sandboxes of a template (its last workdir step). */
  async workdir(templateId: string): Promise<string | undefined> {
    if (this.#workdirs.has(templateId)) return this.#workdirs.get(templateId);
    if (!UUID.test(templateId)) return undefined;
    const t = await this.deps.store.get(templateId);
    this.#workdirs.set(templateId, t?.version?.workdir);
    return t?.version?.workdir;
  }

  /** Starts start_cmd and waits for ready_cmd in a freshly created sandbox; create returns only after this. */
  async boot(sandboxId: string, t: TemplateInfo): Promise<void> {
    if (!t.startCmd && !t.readyCmd) return;
    const client = await this.deps.agents.get(sandboxId, 10_000);
    await startAndWaitReady(client, t);
  }

  // ---- curated templates -------------------------------------------------

  /** Built on first use by the same pipeline as team templates; the result is cached by recipe hash. */
  #ensureCurated(name: string): Promise<TemplateVersion> {
    const ready = this.#curatedReady.get(name);
    if (ready) return Promise.resolve(ready);
    let p = this.#curatedBuilds.get(name);
    if (!p) {
      p = this.#buildCurated(name).then((v) => {
        this.#curatedReady.set(name, v);
        return v;
      });
      p.catch(() => undefined).finally(() => this.#curatedBuilds.delete(name));
      this.#curatedBuilds.set(name, p);
    }
    return p;
  }

  async #curatedFile(name: string): Promise<{ file: string; recipe: CuratedRecipe; baseRoot: string }> {
    const recipe = this.#curated.get(name)!;
    const baseRoot = await this.base();
    const hash = createHash('sha256').update(baseRoot).update(JSON.stringify(recipe)).digest('hex').slice(0, 16);
    return { file: join(this.imageDir, 'templates', 'curated', `${name.replace('/', '-')}-${hash}.json`), recipe, baseRoot };
  }

  async #buildCurated(name: string): Promise<TemplateVersion> {
    const { file, recipe, baseRoot } = await this.#curatedFile(name);
    const cached = await readJson<TemplateVersion>(file);
    if (cached) return cached;
    await mkdir(join(this.imageDir, 'templates', 'curated'), { recursive: true });
    const release = await acquireLock(`${file}.lock`);
    try {
      const again = await readJson<TemplateVersion>(file);
      if (again) return again;
      const log = new BuildLog(join(this.imageDir, 'templates', 'curated', `${name.replace('/', '-')}.log`));
      log.on('event', (ev) => ev.line !== undefined && this.deps.log.info({ template: name }, ev.line));
      const { version } = await runBuild(this.#buildDeps(), {
        teamId: 'platform',
        base: { key: baseRoot, baseRoot, layers: [], env: {}, resources: BASE_RESOURCES },
        steps: recipe.steps,
        startCmd: recipe.start_cmd,
        readyCmd: recipe.ready_cmd,
        readyTimeoutS: DEFAULT_READY_TIMEOUT_S,
        cache: this.#curatedCache,
        log,
      });
      await writeFile(`${file}.tmp`, JSON.stringify(version));
      await rename(`${file}.tmp`, file);
      return version;
    } catch (err) {
      this.deps.log.error({ template: name, err: String(err) }, 'curated template build failed');
      throw err instanceof BuildFailure ? conflict(`template '${name}' could not be built: ${err.message}`) : err;
    } finally {
      await release();
    }
  }

  #buildDeps(): BuildDeps {
    return { ...this.deps.build, agents: this.deps.agents, maxTemplateBytes: this.deps.limits.maxTemplateBytes };
  }

  /** Curated templates as list items; status pending until first built. */
  async #curatedViews(): Promise<TemplateRecord[]> {
    const out: TemplateRecord[] = [];
    const now = this.deps.clock.now();
    for (const [name, r] of this.#curated) {
      const version = this.#curatedReady.get(name) ?? (await readJson<TemplateVersion>((await this.#curatedFile(name)).file)) ?? null;
      if (version) this.#curatedReady.set(name, version);
      out.push({
        id: name,
        teamId: '',
        name,
        definition: { base: BASE_TEMPLATE, steps: r.steps, readyTimeoutS: DEFAULT_READY_TIMEOUT_S, warmPool: 0 },
        status: version ? 'ready' : this.#curatedBuilds.has(name) ? 'building' : 'pending',
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

  // ---- team templates ----------------------------------------------------

  async create(p: Principal, body: CreateTemplateBody): Promise<{ template: TemplateRecord; build: BuildRecord }> {
    const { store, clock } = this.deps;
    if (body.name.startsWith('platform')) throw forbidden(`template names starting with 'platform' are reserved for curated templates`);
    const source = await buildSource(body, BASE_TEMPLATE, async (name) => name.startsWith('platform/') || (await store.byName(p.teamId, name)) !== undefined);
    const steps = source.steps;
    if (steps.length === 0 && !body.start_cmd && !body.ready_cmd && !source.fromImage) throw badRequest('steps is empty and there is no start_cmd or ready_cmd: nothing to build');
    for (const [i, s] of steps.entries()) {
      if (s.type === 'copy' && !isBase64(s.content_base64)) throw badRequest(`steps[${i}].content_base64 is not valid base64`);
      if (s.type === 'env') {
        for (const k of Object.keys(s.env)) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw badRequest(`steps[${i}].env: '${k.slice(0, 64)}' is not a valid variable name`);
      }
    }
    const startCmd = body.start_cmd ?? source.startCmd;
    const def: TemplateDefinition = {
      base: source.base,
      steps,
      readyTimeoutS: body.ready_timeout_s ?? DEFAULT_READY_TIMEOUT_S,
      warmPool: body.warm_pool ?? 0,
      ...(startCmd ? { startCmd } : {}),
      ...(body.ready_cmd ? { readyCmd: body.ready_cmd } : {}),
      ...(source.fromImage ? { fromImage: source.fromImage } : {}),
      ...(body.registry_auth ? { registryAuth: body.registry_auth } : {}),
      ...(body.use_image_cmd ? { useImageCmd: true } : {}),
      ...(body.dockerfile ? { dockerfile: body.dockerfile } : {}),
    };
    // An unknown or unusable base is the caller's error, answered at once; an image is pulled by the build.
    const base = def.fromImage ? undefined : await this.resolve(p.teamId, def.base);

    const limits = await this.#teamLimits(p.teamId);
    const running = this.#building.get(p.teamId) ?? 0;
    if (running >= limits.maxBuilds) throw tooMany('too_many_builds', `the team has ${running} template builds running, the limit is ${limits.maxBuilds}; wait for one to finish`);
    let t = await store.byName(p.teamId, body.name);
    const now = clock.now();
    if (t) {
      if (t.status === 'building') throw conflict(`template '${t.name}' is already building; wait for that build to finish`);
    } else {
      const count = await store.count(p.teamId);
      if (count >= limits.maxTemplates) throw tooMany('too_many_templates', `the team has ${count} templates, the limit is ${limits.maxTemplates}; delete one`);
    }
    this.#building.set(p.teamId, running + 1);
    try {
      if (!t) {
        t = { id: newId(), teamId: p.teamId, name: body.name, definition: def, status: 'building', error: null, version: null, capture: null, latestBuildId: null, createdAt: now, updatedAt: now, deletedAt: null };
        await store.insert(t);
      } else {
        t.status = 'building';
        t.error = null;
        t.updatedAt = now;
        await store.save(t);
      }
      const build: BuildRecord = {
        id: newId(),
        templateId: t.id,
        teamId: p.teamId,
        definition: def,
        status: 'building',
        error: null,
        steps: steps.map((s, index) => ({ index, type: s.type, result: 'pending' })),
        createdAt: now,
        finishedAt: null,
      };
      await store.insertBuild(build);
      t.latestBuildId = build.id;
      const log = new BuildLog(this.#logPath(build.id));
      this.#live.set(build.id, { build, log });
      let released = false;
      // Called before the build log says finished, so a client that saw it may start the next build at once.
      const release = () => {
        if (released) return;
        released = true;
        this.#building.set(p.teamId, (this.#building.get(p.teamId) ?? 1) - 1);
      };
      void this.#runTeamBuild(t, build, base, log, release).finally(() => {
        release();
        setTimeout(() => this.#live.delete(build.id), 60_000).unref();
      });
      return { template: t, build: { ...build } };
    } catch (err) {
      this.#building.set(p.teamId, (this.#building.get(p.teamId) ?? 1) - 1);
      throw err;
    }
  }

  async #runTeamBuild(t: TemplateRecord, build: BuildRecord, base: TemplateInfo | undefined, log: BuildLog, release: () => void): Promise<void> {
    const { store, clock } = this.deps;
    const def = build.definition;
    log.line(`building template '${t.name}' on ${def.base} (${def.steps.length} steps)`);
    const buildBase: BuildBase | undefined = base && {
      key: base.versionKey,
      baseRoot: base.rootfs,
      layers: base.layers,
      env: base.env,
      resources: base.resources,
      ...(base.workdir ? { workdir: base.workdir } : {}),
      ...(base.startCmd ? { startCmd: base.startCmd } : {}),
      ...(base.readyCmd ? { readyCmd: base.readyCmd } : {}),
    };
    try {
      const { version, steps } = await runBuild(this.#buildDeps(), {
        teamId: t.teamId,
        base: buildBase ?? (await imageBase(this.deps.images, t.teamId, def, { ...BASE_RESOURCES }, log)),
        steps: def.steps as TemplateStep[],
        startCmd: def.startCmd,
        readyCmd: def.readyCmd,
        readyTimeoutS: def.readyTimeoutS,
        cache: this.#userCache,
        log,
        onStep: (s) => {
          build.steps = s;
        },
      });
      const ran = steps.filter((s) => s.result === 'ran').map((s) => s.index + 1);
      log.line(`steps run: ${ran.length ? ran.join(', ') : 'none (all cached)'}`);
      const now = clock.now();
      build.steps = steps;
      build.status = 'ready';
      build.finishedAt = now;
      await store.saveBuild(build);
      const cur = await store.get(t.id);
      if (cur) {
        cur.definition = def;
        cur.version = version;
        cur.status = 'ready';
        cur.error = null;
        cur.updatedAt = now;
        await store.save(cur);
        this.#workdirs.set(cur.id, version.workdir);
        this.deps.captures?.settle(cur.id);
      }
      release();
      log.finish('ready');
    } catch (err) {
      const message = err instanceof BuildFailure ? err.message : `build_failed: ${(err as Error).message.split('\n')[0]}`;
      this.deps.log.warn({ template: t.id, build: build.id, error: message }, 'template build failed');
      const now = clock.now();
      build.status = 'failed';
      build.error = message;
      build.finishedAt = now;
      await store.saveBuild(build).catch(() => undefined);
      const cur = await store.get(t.id);
      if (cur) {
        cur.status = 'failed';
        cur.error = message;
        cur.updatedAt = now;
        await store.save(cur).catch(() => undefined);
      }
      log.line(message);
      release();
      log.finish('failed', message);
    }
    await log.flushed();
  }

  #logPath(buildId: string): string {
    return join(this.deps.dataDir, 'templates', 'builds', `${buildId}.log`);
  }

  async #teamLimits(teamId: string): Promise<{ maxBuilds: number; maxTemplates: number }> {
    const team = await this.deps.teams.getTeam(teamId);
    return {
      maxBuilds: team?.limits.max_concurrent_builds ?? this.deps.limits.maxBuilds,
      maxTemplates: team?.limits.max_templates ?? this.deps.limits.maxTemplates,
    };
  }

  async list(p: Principal): Promise<TemplateRecord[]> {
    return [...(await this.#curatedViews()), ...(await this.deps.store.list(p.teamId))];
  }

  async get(p: Principal, ref: string): Promise<TemplateRecord> {
    if (ref.startsWith('platform/')) {
      const t = (await this.#curatedViews()).find((c) => c.id === ref);
      if (!t) throw notFound(`template '${ref.slice(0, 128)}' not found`);
      return t;
    }
    return this.#find(p.teamId, ref);
  }

  async delete(p: Principal, ref: string): Promise<TemplateRecord> {
    if (ref.startsWith('platform/')) throw forbidden(`curated template '${ref.slice(0, 128)}' is read-only`);
    const t = await this.#find(p.teamId, ref);
    if (t.status === 'building') throw conflict(`template '${t.name}' is building; delete it once the build has finished`);
    const users = await this.deps.store.liveSandboxCount(t.id);
    if (users > 0) throw conflict(`template '${t.name}' is used by ${users} sandboxes; delete them first`);
    const now = this.deps.clock.now();
    t.deletedAt = now;
    t.updatedAt = now;
    await this.deps.store.save(t);
    this.#workdirs.delete(t.id);
    this.deps.captures?.settle(t.id);
    return t;
  }

  async getBuild(p: Principal, ref: string, buildId: string): Promise<BuildRecord> {
    const t = await this.#find(p.teamId, ref);
    // A running build's step progress is only in memory until it ends.
    const live = this.#live.get(buildId);
    if (live && live.build.templateId === t.id) return { ...live.build };
    const b = await this.deps.store.getBuild(t.id, buildId);
    if (!b) throw notFound(`build '${buildId.slice(0, 64)}' of template '${t.name}' not found`);
    return b;
  }

  /** The build's log: the live one while it runs (follow its events), else what the file holds. */
  async buildLog(p: Principal, ref: string, buildId: string): Promise<{ past: BuildLogEvent[]; live?: BuildLog }> {
    await this.getBuild(p, ref, buildId);
    const live = this.#live.get(buildId)?.log;
    if (live) return { past: [...live.events], ...(live.finished ? {} : { live }) };
    return { past: await BuildLog.read(this.#logPath(buildId)) };
  }

  /** Live team templates with a warm pool, for the pool to keep filled. */
  async pooled(): Promise<{ teamId: string; target: number; info: TemplateInfo }[]> {
    return (await this.deps.store.listPooled()).map((t) => ({ teamId: t.teamId, target: t.definition.warmPool, info: this.#infoOf(t.id, t.version!) }));
  }
}

function isBase64(s: string): boolean {
  return s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);
}

async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}
