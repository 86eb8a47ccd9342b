import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import { ApiError, badRequest, conflict, internal, notFound, tooMany, unauthorized, unavailable } from '../../errors.ts';
import { newId, parseSandboxId } from '../../ids.ts';
import type { AgentClient, AgentError } from '../../runtime/agent-client.ts';
import { CaptureEndedSandbox, CaptureRefused, type RuntimeDriver, type SnapshotEngine, TEARDOWN_CONCURRENCY } from '../../runtime/driver.ts';
import { type CreateSandboxBody, type PatchSandboxBody, SANDBOX_STATUSES } from '../../schemas/sandbox.ts';
import type { ActiveSlotStore } from '../../store/active-slots.ts';
import type { ResourcesRecord, SandboxRecord, SandboxStore } from '../../store/sandboxes.ts';
import type { TeamStore } from '../../store/teams.ts';
import type { AgentPool } from '../../runtime/agent-pool.ts';
import type { Principal } from '../access/principal.ts';
import { KeyedLock } from '../../runtime/host/keyed-lock.ts';
import { Semaphore } from 'async-mutex';
import { keysetPage } from '../paging.ts';
import type { SandboxNetworkHooks } from '../../network/hooks.ts';
import type { PlatformConnections } from './platform-connections.ts';
import { checkEnv, checkMetadata, checkSecretBindings, markPaused, normalizeNetwork } from './sandbox-rules.ts';
import type { TemplateCaptures } from '../templates/template-captures.ts';
import type { TemplateCatalog } from '../templates/template-catalog.ts';
import { templateSandboxSpec } from '../templates/template-info.ts';
import type { WarmPool } from './warm-pool.ts';
import { BootError, bootSandbox } from '../../templates/boot.ts';
import { inSpan } from '../../tracing.ts';
import { bootFresh, type Launch, personalizeWarm, restoreCapture, startFork } from './sandbox-launchers.ts';
import type { VolumeService } from '../volumes/volumes.ts';
import { volumeMounts, wantsVolumes } from './sandbox-volumes.ts';

export interface SandboxServiceDeps {
  store: SandboxStore;
  teams: TeamStore;
  driver: RuntimeDriver;
  templates: TemplateCatalog;
  agents: AgentPool;
  clock: Clock;
  log: Logger;
  region: string;
  maxActivePerTeam: number;
  /** Active-sandbox slots counted in the store, so the cap holds across API replicas. */
  slots: ActiveSlotStore;
  /** Namespace, egress rules and secret bindings; absent: sandboxes get a loopback-only network. */
  network?: SandboxNetworkHooks;
  /** Resolves `from_snapshot` (the snapshot service); absent: forks answer 503. */
  forks?: ForkSource;
  /** Pre-started sandboxes per template; absent or empty: every create boots one. */
  warmPool?: WarmPool;
  /** Template versions captured with start_cmd running (gvisor); absent or none: sandboxes boot. */
  captures?: TemplateCaptures;
  /** Sandbox starts (network and engine) run at most this many at once; the rest queue in arrival order. */
  maxConcurrentStarts: number;
  /** Connections the platform holds to sandboxes, closed before a capture; absent: none are held. */
  connections?: PlatformConnections;
  /** Volumes sandboxes mount; absent: creates that ask for volumes answer 503. */
  volumes?: VolumeService;
}

/** What a sandbox started from a snapshot continues from. */
export interface ForkSource {
  forkSource(teamId: string, snapshotId: string): Promise<{ snapshotId: string; templateId: string | null; resources: ResourcesRecord; env: Record<string, string>; engine: SnapshotEngine }>;
}

export interface ListQuery {
  limit?: string;
  cursor?: string;
  status?: string;
  metadata: [string, string][];
}

const STATUSES = new Set<string>(SANDBOX_STATUSES);
/** How long an auto-pause that failed waits before it is tried again. */
const AUTO_PAUSE_RETRY_MS = 30_000;
/** A slot claim outlives any create or resume; it only expires when the replica holding it died. */
const SLOT_CLAIM_TTL_MS = 15 * 60_000;

/** The sandbox state machine: every transition goes through here, one at a time per sandbox. */
export class SandboxService {
  readonly deps: Readonly<SandboxServiceDeps>;
  readonly lock = new KeyedLock();
  readonly #starts: Semaphore;
  /** Engine teardowns of deleted sandboxes run a few at a time, after the answer. */
  readonly #teardowns = new Semaphore(TEARDOWN_CONCURRENCY);
  readonly #tearingDown = new Set<Promise<void>>();

  constructor(deps: SandboxServiceDeps) {
    this.deps = deps;
    this.#starts = new Semaphore(deps.maxConcurrentStarts);
  }

  /** `opts.previewAccess`: set by E2B's API, whose sandboxes open every port unless asked not to (`legacy_public`), which the public body cannot select. */
  async create(p: Principal, body: CreateSandboxBody, opts: { previewAccess?: SandboxRecord['previewAccess'] } = {}): Promise<SandboxRecord> {
    const { store, driver, templates, clock } = this.deps;
    const metadata = body.metadata ?? {};
    checkMetadata(metadata);
    const env = body.env ?? {};
    checkEnv(env);
    const secrets = body.secrets ?? {};
    checkSecretBindings(secrets);
    for (const name of Object.keys(secrets)) {
      if (name in env) throw badRequest(`'${name}' is both an env variable and a secret binding`);
    }
    const network = body.network ? normalizeNetwork(body.network) : null;
    // Another region's creates reach that region's own API (several regions); here only this one is known.
    if (body.region !== undefined && body.region !== this.deps.region) throw badRequest(`unknown region '${body.region.slice(0, 64)}'`);
    if (body.from_snapshot !== undefined && (body.from_template !== undefined || body.env !== undefined || Object.keys(secrets).length > 0)) {
      throw badRequest("from_snapshot continues the snapshot's processes: its template and environment are inherited, so from_template, env and secrets cannot be given");
    }
    if (body.from_snapshot !== undefined && !this.deps.forks) throw unavailable('this host cannot start sandboxes from snapshots');
    const fork = body.from_snapshot === undefined ? undefined : await this.deps.forks!.forkSource(p.teamId, body.from_snapshot);
    const template = fork
      ? { id: fork.templateId ?? 'platform/base', rootfs: '', layers: [], resources: fork.resources, env: {}, readyTimeoutS: 0, versionKey: '' }
      : await templates.resolve(p.teamId, body.from_template);

    const claim = await this.#claimActiveSlot(p.teamId);
    let started: (() => void) | undefined;
    try {
      // A pre-started sandbox of the template is personalized instead of booting one; secret bindings need a fresh
      // one, and volumes one unless the engine can mount them into it running.
      const withVolumes = wantsVolumes(body);
      const boots = fork || Object.keys(secrets).length > 0 || (withVolumes && !driver.attachVolumes);
      const warm = boots ? undefined : this.deps.warmPool?.take(template.id, template.versionKey);
      // Cold starts queue for the host: a burst then completes in arrival order instead of all at its end.
      if (!warm) [, started] = await this.#starts.acquire();
      const id = warm?.id ?? newId();
      const net = warm ? warm.net : await inSpan('sandbox.network_setup', async () => this.deps.network?.prepare({ teamId: p.teamId, sandboxId: id, templateRoot: template.rootfs, network, secrets }));
      const capture = warm || fork || (withVolumes && !driver.attachVolumes) ? undefined : this.deps.captures?.lookup(template);
      // Nothing of another owner is in a pre-started sandbox (pool sandboxes are fresh and never handed out twice); a failed create destroys it.
      const launch: Launch = { id, spec: templateSandboxSpec(id, template, net, env), template, net, env, network, engineHolds: warm !== undefined };
      try {
        launch.spec.mounts = [...(launch.spec.mounts ?? []), ...(await volumeMounts(this.deps.volumes, p.teamId, id, body, [...template.layers, template.rootfs]))];
        const how = warm ? 'warm' : fork ? 'fork' : capture ? 'capture' : 'boot';
        await inSpan(
          'sandbox.start',
          async () => {
            if (warm) await personalizeWarm(this.deps, launch);
            else if (fork) await startFork(launch, fork);
            else if (!(capture && (await restoreCapture(this.deps, launch, capture)))) await bootFresh(this.deps, launch);
          },
          { 'sandpit.start': how },
        );
      } catch (err) {
        if (launch.engineHolds || err instanceof BootError) await driver.destroy(id).catch(() => undefined);
        await net?.abort();
        await this.deps.volumes?.release(id);
        if (err instanceof BootError) throw unavailable(`the template's ${err.code.replace('_failed', '')} did not come up: ${err.message}`);
        throw err;
      }
      const now = clock.now();
      const rec: SandboxRecord = {
        id,
        teamId: p.teamId,
        name: body.name ?? null,
        templateId: template.id,
        driver: driver.name,
        region: this.deps.region,
        status: 'active',
        metadata,
        env: fork ? fork.env : env,
        network,
        secrets,
        previewAccess: opts.previewAccess ?? body.preview_access ?? 'public',
        resources: template.resources,
        accessToken: `sat_${randomBytes(24).toString('base64url')}`,
        autoPauseSeconds: body.auto_pause_seconds ?? null,
        autoDeleteSeconds: body.auto_delete_seconds ?? null,
        autoPauseAt: body.auto_pause_seconds ? now + body.auto_pause_seconds * 1000 : null,
        autoDeleteAt: null,
        activeSince: now,
        pausedAt: null,
        latestSnapshotId: null,
        autoPauseDiskOnly: body.auto_pause_keep_memory === false,
        pausedDiskOnly: false,
        createdAt: now,
        updatedAt: now,
        deletedAt: null,
      };
      try {
        await store.insert(rec, 'created');
      } catch (err) {
        await driver.destroy(id).catch(() => undefined);
        await net?.abort();
        await this.deps.volumes?.release(id);
        throw err;
      }
      return rec;
    } finally {
      started?.();
      await this.deps.slots.release(claim, clock.now());
    }
  }

  /** Claims one of the team's active slots in the store (counting creates and resumes in flight on every replica). */
  async #claimActiveSlot(teamId: string): Promise<string> {
    const max = await this.#maxActive(teamId);
    const claim = newId();
    const res = await this.deps.slots.claim(claim, teamId, max, this.deps.clock.now(), SLOT_CLAIM_TTL_MS);
    if (!res.claimed) throw tooMany('too_many_sandboxes', `the team has ${res.active} active sandboxes, the limit is ${max}; pause or delete one`);
    return claim;
  }

  async #maxActive(teamId: string): Promise<number> {
    const team = await this.deps.teams.getTeam(teamId);
    return team?.limits.max_active_sandboxes ?? this.deps.maxActivePerTeam;
  }

  async get(p: Principal, rawId: string): Promise<SandboxRecord> {
    const rec = await this.deps.store.get(parseSandboxId(rawId));
    if (!rec || rec.teamId !== p.teamId) throw notFound(`sandbox '${rawId}' not found`);
    return rec;
  }

  /** Data-plane access: the sandbox exists and the token is its own. */
  async getWithToken(rawId: string | undefined, token: string | undefined): Promise<SandboxRecord> {
    if (!rawId) throw badRequest('missing X-Platform-Sandbox-Id header (or use the per-sandbox host)');
    if (!token) throw unauthorized('missing X-Access-Token header');
    const rec = await this.deps.store.get(parseSandboxId(rawId));
    if (!rec) throw notFound(`sandbox '${rawId}' not found`);
    const a = Buffer.from(rec.accessToken);
    const b = Buffer.from(token);
    if (a.length !== b.length || !timingSafeEqual(a, b)) throw unauthorized('invalid access token for this sandbox');
    return rec;
  }

  async list(p: Principal, q: ListQuery): Promise<{ items: SandboxRecord[]; nextCursor?: string }> {
    const statuses = q.status === undefined ? undefined : q.status.split(',').map((s) => s.trim());
    for (const s of statuses ?? []) if (!STATUSES.has(s)) throw badRequest(`unknown status '${s.slice(0, 32)}'`);
    return keysetPage(q, (after, limit) => this.deps.store.list({ teamId: p.teamId, statuses, metadata: q.metadata, after, limit }));
  }

  async patch(p: Principal, rawId: string, body: PatchSandboxBody): Promise<SandboxRecord> {
    const id = (await this.get(p, rawId)).id;
    if (body.metadata !== undefined) checkMetadata(body.metadata);
    const network = body.network === undefined || body.network === null ? body.network : normalizeNetwork(body.network);
    return this.lock.run(id, async () => {
      const rec = await this.#mustGet(p, id, rawId);
      if (body.network !== undefined && (rec.status === 'paused' || rec.status === 'pausing')) {
        throw conflict('network rules cannot be changed while the sandbox is paused; resume it first');
      }
      // Applied before it is stored: a rule set the host cannot enforce is never recorded.
      if (network !== undefined) await this.deps.network?.update(id, network);
      const now = this.deps.clock.now();
      if (body.name !== undefined) rec.name = body.name;
      if (body.metadata !== undefined) rec.metadata = body.metadata;
      if (body.preview_access !== undefined) rec.previewAccess = body.preview_access;
      if (network !== undefined) rec.network = network;
      if (body.auto_pause_seconds !== undefined) {
        rec.autoPauseSeconds = body.auto_pause_seconds;
        rec.autoPauseAt = rec.status === 'active' && body.auto_pause_seconds !== null ? (rec.activeSince ?? now) + body.auto_pause_seconds * 1000 : null;
      }
      if (body.auto_pause_keep_memory !== undefined) rec.autoPauseDiskOnly = !body.auto_pause_keep_memory;
      if (body.auto_delete_seconds !== undefined) {
        rec.autoDeleteSeconds = body.auto_delete_seconds;
        // Applying the window to an already-paused sandbox arms the deadline from now.
        rec.autoDeleteAt = rec.status === 'paused' && body.auto_delete_seconds !== null ? now + body.auto_delete_seconds * 1000 : null;
      }
      rec.updatedAt = now;
      await this.deps.store.save(rec, { type: 'updated', at: now }, body.metadata !== undefined);
      return rec;
    });
  }

  /** `keepMemory` false: only the disk is kept; processes end, and resume boots the sandbox afresh. */
  async pause(p: Principal, rawId: string, opts: { keepMemory?: boolean } = {}): Promise<SandboxRecord> {
    const id = (await this.get(p, rawId)).id;
    return this.lock.run(id, async () => {
      const rec = await this.#mustGet(p, id, rawId);
      if (rec.status === 'paused') throw conflict('the sandbox is already paused');
      if (rec.status !== 'active') throw conflict(`the sandbox is ${rec.status} and cannot be paused`);
      await this.#pause(rec, 'paused', opts.keepMemory ?? true);
      if (rec.autoDeleteSeconds === 0) await this.#delete(rec, 'auto_deleted');
      return rec;
    });
  }

  async #pause(rec: SandboxRecord, eventType: string, keepMemory: boolean): Promise<void> {
    const { store, driver, clock } = this.deps;
    const stop = driver.stop?.bind(driver);
    if (!keepMemory && !stop) throw unavailable(`the ${driver.name} engine cannot pause a sandbox without its memory`);
    rec.status = 'pausing';
    // Recorded before the engine acts: a restart in between finds how it was being paused.
    rec.pausedDiskOnly = !keepMemory;
    rec.updatedAt = clock.now();
    await store.save(rec);
    this.closePlatformConnections(rec.id);
    await this.captureOrSettle(
      rec,
      async () => {
        if (keepMemory) await driver.pause(rec.id);
        else {
          await stop!(rec.id);
          // Its agent is gone with its processes; the next connection is to the one the boot starts.
          this.deps.agents.drop(rec.id);
        }
      },
      async () => {
        rec.status = 'active';
        rec.pausedDiskOnly = false;
        rec.updatedAt = clock.now();
        await store.save(rec);
      },
    );
    const now = clock.now();
    // A checkpoint is the sandbox's own snapshot: it resumes from it (not a Snapshot resource).
    if (keepMemory && driver.pauseKeeps === 'disk') rec.latestSnapshotId = newId();
    markPaused(rec, now);
    await store.save(rec, { type: eventType, at: now });
  }

  /**
   * Runs an engine step that pauses or checkpoints the sandbox. A save that failed half-way can take the
   * sandbox down with it (gVisor on a just-closed TCP socket), so on failure what the engine holds is
   * recorded, never a status it cannot back: still running -> `stillRunning` and the error (409 for a
   * capture the engine refused); gone -> failed (pause_failed); paused after all -> as if it succeeded.
   * The caller holds the sandbox's lock.
   */
  async captureOrSettle(rec: SandboxRecord, capture: () => Promise<void>, stillRunning: (err: Error) => Promise<void>): Promise<void> {
    try {
      await capture();
    } catch (err) {
      // Its process may not have exited yet and would look running: it must not be recorded active again.
      if (err instanceof CaptureEndedSandbox) throw await this.recordLost(rec, 'pause', err);
      const state = await this.deps.driver.state(rec.id).catch(() => 'missing' as const);
      if (state === 'running') {
        await stillRunning(err as Error);
        if (err instanceof CaptureRefused) throw conflict(err.message, err.retryAfterS);
        throw err;
      }
      if (state !== 'paused') throw await this.recordLost(rec, 'pause', err as Error);
    }
  }

  /** Closes the platform's own connections to the sandbox from the host side: a pause or capture cuts them anyway, and their clients should see it at once. */
  closePlatformConnections(id: string): void {
    const n = this.deps.connections?.close(id) ?? 0;
    if (n > 0) this.deps.log.debug({ sandbox: id, connections: n }, 'closed platform connections before a capture');
  }

  /**
   * A capture failed and the engine no longer runs the sandbox: it is recorded failed (`pause_failed`) and its
   * remains removed. Answers the error to throw. The caller holds the sandbox's lock.
   */
  async recordLost(rec: SandboxRecord, during: 'pause' | 'snapshot', err: Error): Promise<Error> {
    const now = this.deps.clock.now();
    rec.status = 'failed';
    rec.failureReason = 'pause_failed';
    rec.activeSince = null;
    rec.autoPauseAt = null;
    rec.updatedAt = now;
    await this.deps.store.save(rec, { type: 'failed', at: now, data: { during } });
    this.deps.agents.drop(rec.id);
    await this.deps.driver.destroy(rec.id).catch(() => undefined);
    const what = during === 'pause' ? 'pausing' : 'the snapshot';
    return internal(`${what} failed and took the sandbox down (${err.message.split('\n')[0]}); it is now failed`);
  }

  /** `keepMemory` false: the memory the pause kept is dropped, and the sandbox boots from its disk. */
  async resume(p: Principal, rawId: string, opts: { keepMemory?: boolean } = {}): Promise<SandboxRecord> {
    const id = (await this.get(p, rawId)).id;
    return this.lock.run(id, async () => {
      const rec = await this.#mustGet(p, id, rawId);
      if (rec.status === 'active') throw conflict('the sandbox is already active');
      if (rec.status !== 'paused') throw conflict(`the sandbox is ${rec.status} and cannot be resumed`);
      await this.#resume(rec, opts.keepMemory ?? true);
      return rec;
    });
  }

  /** Idempotent resume: a paused sandbox is resumed, an active one is returned as it is. */
  async activate(p: Principal, rawId: string, opts: { keepMemory?: boolean } = {}): Promise<SandboxRecord> {
    const id = (await this.get(p, rawId)).id;
    return this.lock.run(id, async () => {
      const rec = await this.#mustGet(p, id, rawId);
      if (rec.status === 'paused') await this.#resume(rec, opts.keepMemory ?? true);
      else if (rec.status !== 'active') throw conflict(`the sandbox is ${rec.status} and cannot be activated`);
      return rec;
    });
  }

  /** Makes the sandbox runnable for a command: auto-resumes a paused one. */
  async ensureActive(rec: SandboxRecord): Promise<SandboxRecord> {
    // A transition in progress (a snapshot's restore, a pause) is waited out, never raced.
    if (rec.status === 'active' && !this.lock.busy(rec.id)) return rec;
    return this.lock.run(rec.id, async () => {
      const cur = await this.deps.store.get(rec.id);
      if (!cur) throw notFound('sandbox not found');
      this.#stillHere(cur);
      if (cur.status === 'paused') await this.#resume(cur);
      else if (cur.status !== 'active') {
        throw conflict(`the sandbox is ${cur.status}${cur.failureReason ? ` (${cur.failureReason})` : ''}; commands cannot run in it`);
      }
      return cur;
    });
  }

  /** The sandbox, resumed if it was paused, and its agent connection; 503 when the agent cannot be reached. */
  async withAgent(rec: SandboxRecord): Promise<{ live: SandboxRecord; client: AgentClient }> {
    const live = await this.ensureActive(rec);
    const client = await this.deps.agents.get(live.id).catch((err: AgentError) => {
      // An agent of another protocol version will not change by retrying.
      throw unavailable(err.code === 'EPROTO' ? err.message : 'the sandbox agent is not reachable; retry shortly');
    });
    return { live, client };
  }

  async #resume(rec: SandboxRecord, keepMemory = true): Promise<void> {
    const { store, driver, clock } = this.deps;
    const boot = !keepMemory && !rec.pausedDiskOnly;
    if (boot && !driver.dropMemory) throw unavailable(`the ${driver.name} engine cannot boot a paused sandbox from its disk`);
    const claim = await this.#claimActiveSlot(rec.teamId);
    rec.status = 'resuming';
    rec.updatedAt = clock.now();
    try {
      await store.save(rec);
    } finally {
      await this.deps.slots.release(claim, clock.now());
    }
    try {
      if (boot) {
        await driver.dropMemory!(rec.id);
        // The checkpoint it would have resumed from is gone.
        rec.pausedDiskOnly = true;
        rec.latestSnapshotId = null;
      }
      await driver.resume(rec.id);
      if (rec.pausedDiskOnly) {
        await this.#afterBoot(rec).catch(async (err: unknown) => {
          // Back to its disk alone, so the status kept (paused) is what the engine holds.
          this.deps.agents.drop(rec.id);
          await driver.stop!(rec.id);
          throw err;
        });
      }
    } catch (err) {
      rec.status = 'paused';
      rec.updatedAt = clock.now();
      await store.save(rec);
      throw err;
    }
    const now = clock.now();
    rec.pausedDiskOnly = false;
    rec.status = 'active';
    rec.activeSince = now;
    rec.pausedAt = null;
    rec.autoDeleteAt = null;
    rec.autoPauseAt = rec.autoPauseSeconds === null ? null : now + rec.autoPauseSeconds * 1000;
    rec.updatedAt = now;
    await store.save(rec, { type: 'resumed', at: now });
  }

  /**
   * A sandbox booted afresh from its disk: the environment given after its engine started (a warm
   * sandbox's) is set again, and its template's start_cmd runs as on a first boot.
   */
  async #afterBoot(rec: SandboxRecord): Promise<void> {
    const { agents, templates } = this.deps;
    if (Object.keys(rec.env).length > 0) await (await agents.get(rec.id)).setEnv(rec.env);
    // A template deleted since has nothing left to start.
    const template = await templates.resolve(rec.teamId, rec.templateId).catch(() => undefined);
    if (!template) return;
    try {
      await bootSandbox(agents, rec.id, template);
    } catch (err) {
      if (err instanceof BootError) throw unavailable(`the template's ${err.code.replace('_failed', '')} did not come up after the boot: ${err.message}`);
      throw err;
    }
  }

  async delete(p: Principal, rawId: string): Promise<void> {
    const id = (await this.get(p, rawId)).id;
    await this.lock.run(id, async () => {
      const rec = await this.#mustGet(p, id, rawId);
      await this.#delete(rec, 'deleted');
    });
  }

  /**
   * The row is marked first, so the sandbox is gone from GET and lists at once; its engine and network
   * go after the answer. A crash before they are gone leaves them to reconciliation (engine state with
   * no live row is destroyed at start), so nothing is lost across a restart.
   */
  async #delete(rec: SandboxRecord, eventType: string): Promise<void> {
    const now = this.deps.clock.now();
    rec.deletedAt = now;
    rec.updatedAt = now;
    await this.deps.store.save(rec, { type: eventType, at: now, data: { status: rec.status } });
    this.deps.agents.drop(rec.id);
    this.deps.connections?.close(rec.id);
    const teardown = this.#teardowns
      .runExclusive(async () => {
        await this.deps.driver.destroy(rec.id).catch((err) => this.deps.log.error({ sandbox: rec.id, err: String(err) }, 'engine cleanup failed; reconciliation retries'));
        await this.deps.network?.release(rec.id).catch((err) => this.deps.log.error({ sandbox: rec.id, err: String(err) }, 'network cleanup failed; reconciliation retries'));
      })
      .finally(() => this.#tearingDown.delete(teardown));
    this.#tearingDown.add(teardown);
  }

  /** Resolves once the engines and networks of every sandbox deleted so far are gone (shutdown, tests). */
  async teardownsSettled(): Promise<void> {
    while (this.#tearingDown.size > 0) await Promise.allSettled([...this.#tearingDown]);
  }

  /** Runs due auto-pauses and auto-deletes; called by the timer loop (and directly by tests). */
  async runTimers(): Promise<void> {
    const { store, clock, log } = this.deps;
    const now = clock.now();
    for (const id of await store.dueForAutoPause(now)) {
      await this.lock.run(id, async () => {
        const rec = await store.get(id);
        if (rec?.status !== 'active' || rec.autoPauseAt === null || rec.autoPauseAt > clock.now()) return;
        try {
          // A sandbox deleted as it pauses (auto_delete_seconds 0) needs no memory saved first.
          const diskOnly = rec.autoPauseDiskOnly || rec.autoDeleteSeconds === 0;
          await this.#pause(rec, 'auto_paused', !(diskOnly && this.deps.driver.stop));
          if (rec.autoDeleteSeconds === 0) await this.#delete(rec, 'auto_deleted');
        } catch (err) {
          if (rec.status !== 'active') return;
          log.warn({ sandbox: id, err: String(err) }, 'auto-pause failed; will retry');
          const hint = err instanceof ApiError ? Number(err.headers['retry-after']) * 1000 : Number.NaN;
          rec.autoPauseAt = clock.now() + (hint > 0 ? Math.min(hint, AUTO_PAUSE_RETRY_MS) : AUTO_PAUSE_RETRY_MS);
          await store.save(rec);
        }
      });
    }
    for (const id of await store.dueForAutoDelete(clock.now())) {
      await this.lock.run(id, async () => {
        const rec = await store.get(id);
        if (rec?.status !== 'paused' || rec.autoDeleteAt === null || rec.autoDeleteAt > clock.now()) return;
        await this.#delete(rec, 'auto_deleted');
      });
    }
  }

  async #mustGet(p: Principal, id: string, rawId: string): Promise<SandboxRecord> {
    const rec = await this.deps.store.get(id);
    if (!rec || rec.teamId !== p.teamId) throw notFound(`sandbox '${rawId}' not found`);
    this.#stillHere(rec);
    return rec;
  }

  /** A move (drain, migrate) took it to another node while a request waited for its lock here: the retry is sent there. */
  #stillHere(rec: SandboxRecord): void {
    if (this.deps.store.node !== null && rec.nodeId !== this.deps.store.node) throw unavailable('the sandbox was moved to another node while this request waited; retry it');
  }
}
