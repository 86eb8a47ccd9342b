import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import { badRequest, conflict, forbidden, notFound, tooMany } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { CreateTemplateBody, TemplateStep } from '../../schemas/template.ts';
import type { ResourceEvent } from '../../store/resource-events.ts';
import type { BuildRecord, TemplateCapture, TemplateDefinition, TemplateRecord, TemplateStore } from '../../store/templates.ts';
import { templateView } from './template-view.ts';
import { inSpan } from '../../tracing.ts';
import type { TeamStore } from '../../store/teams.ts';
import type { LayerCache } from '../../templates/layer-cache.ts';
import { type BuildDeps, BuildFailure, BuildLog, type BuildLogEvent, runBuild } from '../../templates/run-build.ts';
import type { Principal } from '../access/principal.ts';
import { buildSource, imageBase, type ImageTemplateDeps } from './image-templates.ts';
import type { TemplateCatalog } from './template-catalog.ts';
import { BASE_RESOURCES, BASE_TEMPLATE, buildBaseOf, DEFAULT_READY_TIMEOUT_S, type TemplateInfo } from './template-info.ts';

/** What E2B's builder adds to a create. */
export interface CreateOptions {
  /** Ids handed out before the definition arrived (E2B's build request). */
  templateId?: string;
  buildId?: string;
  /** Names for the build once it is ready, besides `latest`. */
  tags?: string[];
  /** Steps from this index on skip the layer cache. */
  noCacheFrom?: number;
  /** A build without steps copies its base as it is (E2B's builder allows it). */
  allowEmpty?: boolean;
}

export interface TemplateLimits {
  /** Concurrent builds per team (teams.limits max_concurrent_builds overrides). */
  maxBuilds: number;
  /** Live templates per team (teams.limits max_templates overrides). */
  maxTemplates: number;
}

export interface TeamTemplatesDeps {
  dataDir: string;
  store: TemplateStore;
  teams: TeamStore;
  clock: Clock;
  log: Logger;
  limits: TemplateLimits;
  catalog: TemplateCatalog;
  build: BuildDeps;
  /** Pulls images for from_image and Dockerfile FROM image builds. */
  images: ImageTemplateDeps;
  /** Told when a template's version changes or it is deleted. */
  captures?: { settle(templateId: string): void; held(templateId: string): TemplateCapture | undefined };
  /** Team layers, content-addressed (shared with a node's copies of templates built elsewhere). */
  cache: LayerCache;
}

/** A team's own templates: builds (limits, live logs), list, get, delete. */
export class TeamTemplates {
  readonly deps: TeamTemplatesDeps;
  readonly #building = new Map<string, number>();
  /** Builds of this process, with their live logs, kept a minute after they end for followers. */
  readonly #live = new Map<string, { build: BuildRecord; log: BuildLog }>();
  readonly #cache: LayerCache;

  constructor(deps: TeamTemplatesDeps) {
    this.deps = deps;
    this.#cache = deps.cache;
  }

  /** Whether a build runs in this process. */
  get building(): boolean {
    return [...this.#building.values()].some((n) => n > 0);
  }

  /** Settles builds a previous server left unfinished. */
  async init(): Promise<void> {
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
        await this.deps.store.save(t, templateEvent('template.failed', t, now));
      }
    }
  }

  async create(p: Principal, body: CreateTemplateBody, opts: CreateOptions = {}): Promise<{ template: TemplateRecord; build: BuildRecord }> {
    const { store, clock } = this.deps;
    if (body.name.startsWith('platform')) throw forbidden(`template names starting with 'platform' are reserved for curated templates`);
    const source = await buildSource(body, BASE_TEMPLATE, async (name) => name.startsWith('platform/') || (await store.byName(p.teamId, name)) !== undefined);
    const steps = source.steps;
    if (steps.length === 0 && !body.start_cmd && !body.ready_cmd && !source.fromImage && !opts.allowEmpty) throw badRequest('steps is empty and there is no start_cmd or ready_cmd: nothing to build');
    for (const [i, s] of steps.entries()) {
      if (s.type === 'copy' && !isBase64(s.content_base64)) throw badRequest(`steps[${i}].content_base64 is not valid base64`);
      if (s.type === 'env') {
        for (const k of Object.keys(s.env)) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw badRequest(`steps[${i}].env: '${k.slice(0, 64)}' is not a valid variable name`);
      }
      if (s.type === 'archive') {
        if (s.src.startsWith('/') || s.src.split('/').includes('..')) throw badRequest(`steps[${i}].src must be relative and without '..' parts`);
        if (!(await this.deps.build.archives?.has(p.teamId, s.archive))) throw badRequest(`steps[${i}].archive: no upload ${s.archive} of the team; upload the files first`);
      }
    }
    const noCacheFrom = body.no_cache ? 0 : opts.noCacheFrom;
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
      ...(noCacheFrom !== undefined ? { noCacheFrom } : {}),
    };
    // An unknown or unusable base is the caller's error, answered at once; an image is pulled by the build.
    const base = def.fromImage ? undefined : await this.deps.catalog.resolve(p.teamId, def.base);

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
        t = {
          id: opts.templateId ?? newId(),
          teamId: p.teamId,
          name: body.name,
          definition: def,
          status: 'building',
          error: null,
          version: null,
          capture: null,
          latestBuildId: null,
          createdAt: now,
          updatedAt: now,
          deletedAt: null,
        };
        await store.insert(t);
      } else {
        t.status = 'building';
        t.error = null;
        t.updatedAt = now;
        await store.save(t);
      }
      const build: BuildRecord = {
        id: opts.buildId ?? newId(),
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
      // Its span belongs to the trace of the POST that started it and outlives the request.
      const template = t;
      const tags = ['latest', ...(opts.tags ?? [])];
      void inSpan('template.build', () => this.#runTeamBuild(template, build, base, log, release, tags), { 'sandpit.template_id': template.id, 'sandpit.build_id': build.id }).finally(() => {
        release();
        setTimeout(() => this.#live.delete(build.id), 60_000).unref();
      });
      return { template: t, build: { ...build } };
    } catch (err) {
      this.#building.set(p.teamId, (this.#building.get(p.teamId) ?? 1) - 1);
      throw err;
    }
  }

  async #runTeamBuild(t: TemplateRecord, build: BuildRecord, base: TemplateInfo | undefined, log: BuildLog, release: () => void, tags: string[]): Promise<void> {
    const { store, clock } = this.deps;
    const def = build.definition;
    log.line(`building template '${t.name}' on ${def.base} (${def.steps.length} steps)`);
    const buildBase = base && buildBaseOf(base);
    try {
      const { version, steps } = await runBuild(this.deps.build, {
        teamId: t.teamId,
        base: buildBase ?? (await imageBase(this.deps.images, t.teamId, def, { ...BASE_RESOURCES }, log)),
        steps: def.steps as TemplateStep[],
        startCmd: def.startCmd,
        readyCmd: def.readyCmd,
        readyTimeoutS: def.readyTimeoutS,
        cache: this.#cache,
        log,
        onStep: (s) => {
          build.steps = s;
        },
        ...(def.noCacheFrom !== undefined ? { noCacheFrom: def.noCacheFrom, buildId: build.id } : {}),
      });
      version.buildId = build.id;
      const ran = steps.filter((s) => s.result === 'ran').map((s) => s.index + 1);
      log.line(`steps run: ${ran.length ? ran.join(', ') : 'none (all cached)'}`);
      const now = clock.now();
      build.steps = steps;
      // The template (and its tags) become ready before the build does: a client that sees the
      // build ready starts a sandbox at once, and the build object is what status polls read.
      const cur = await store.get(t.id);
      if (cur) {
        cur.definition = def;
        cur.version = version;
        cur.status = 'ready';
        cur.error = null;
        cur.updatedAt = now;
        await store.save(cur, templateEvent('template.built', cur, now));
        await store.putTags(cur.id, build.id, version, [...new Set(tags)], now);
        this.deps.catalog.versionChanged(cur.id, version.workdir);
        this.deps.captures?.settle(cur.id);
      }
      build.status = 'ready';
      build.finishedAt = now;
      await store.saveBuild(build);
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
        await store.save(cur, templateEvent('template.failed', cur, now)).catch(() => undefined);
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

  /** Curated templates as records, with the capture this host holds of each (they have no store row to keep it). */
  async #curatedViews(): Promise<TemplateRecord[]> {
    return (await this.deps.catalog.curated.views()).map((t) => ({ ...t, capture: this.deps.captures?.held(t.id) ?? null }));
  }

  async get(p: Principal, ref: string): Promise<TemplateRecord> {
    if (ref.startsWith('platform/')) {
      const t = (await this.#curatedViews()).find((c) => c.id === ref);
      if (!t) throw notFound(`template '${ref.slice(0, 128)}' not found`);
      return t;
    }
    return this.deps.catalog.find(p.teamId, ref);
  }

  async delete(p: Principal, ref: string): Promise<TemplateRecord> {
    if (ref.startsWith('platform/')) throw forbidden(`curated template '${ref.slice(0, 128)}' is read-only`);
    const t = await this.deps.catalog.find(p.teamId, ref);
    if (t.status === 'building') throw conflict(`template '${t.name}' is building; delete it once the build has finished`);
    const users = await this.deps.store.liveSandboxCount(t.id);
    if (users > 0) throw conflict(`template '${t.name}' is used by ${users} sandboxes; delete them first`);
    const now = this.deps.clock.now();
    t.deletedAt = now;
    t.updatedAt = now;
    await this.deps.store.save(t);
    this.deps.catalog.forget(t.id);
    this.deps.captures?.settle(t.id);
    return t;
  }

  async getBuild(p: Principal, ref: string, buildId: string): Promise<BuildRecord> {
    const t = await this.deps.catalog.find(p.teamId, ref);
    // A running build's step progress is only in memory until it ends.
    const live = this.#live.get(buildId);
    if (live && live.build.templateId === t.id) return { ...live.build };
    const b = await this.deps.store.getBuild(t.id, buildId);
    if (!b) throw notFound(`build '${buildId.slice(0, 64)}' of template '${t.name}' not found`);
    return b;
  }

  /** The build's log: the live one while it runs (follow its events), else what the file holds. */
  async buildLog(p: Principal, ref: string, buildId: string): Promise<{ build: BuildRecord; past: BuildLogEvent[]; live?: BuildLog }> {
    const build = await this.getBuild(p, ref, buildId);
    const live = this.#live.get(buildId)?.log;
    if (live) return { build, past: [...live.events], ...(live.finished ? {} : { live }) };
    return { build, past: await BuildLog.read(this.#logPath(buildId)) };
  }
}

function isBase64(s: string): boolean {
  return s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);
}

/** A template's lifecycle event for webhooks: the template as the API shows it (its warm pool counted as empty). */
function templateEvent(type: string, t: TemplateRecord, at: number): ResourceEvent {
  return { type, at, orderingKey: `template:${t.id}`, resource: templateView(t, 0) };
}
