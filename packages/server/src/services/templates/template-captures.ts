import type { Logger } from 'pino';
import { newId } from '../../ids.ts';
import type { RuntimeDriver, SandboxSpec, SnapshotEngine } from '../../runtime/driver.ts';
import type { TemplateCapture, TemplateStore, TemplateVersion } from '../../store/templates.ts';
import type { AgentPool } from '../../runtime/agent-pool.ts';
import { bootSandbox } from '../../templates/boot.ts';
import type { SandboxNetworkHooks } from '../../network/hooks.ts';
import type { CuratedCaptures } from './curated-captures.ts';
import type { TemplateCatalog } from './template-catalog.ts';
import { type TemplateInfo, templateSandboxSpec } from './template-info.ts';

export interface TemplateCaptureDeps {
  driver: RuntimeDriver;
  agents: AgentPool;
  templates: TemplateCatalog;
  store: TemplateStore;
  /** The network layer: the captured sandbox gets a namespace like the sandboxes restored from it. */
  network?: SandboxNetworkHooks;
  log: Logger;
  /** Off: every sandbox boots; existing captures are removed at start. */
  enabled: boolean;
  /** Where the captures of curated templates are kept (they have no store row). */
  curated: CuratedCaptures;
}

/**
 * After a failed capture of a version, how long until each of the next tries: most failures pass
 * (a refusal while a start command still holds a deleted file or a connection, a loaded host).
 */
const CAPTURE_RETRY_MS = [10_000, 60_000, 300_000];

/**
 * Where the engine can capture memory (gvisor), each team template version
 * with a start_cmd or ready_cmd is booted once (no team row, not billed),
 * started and made ready, then checkpointed into an engine snapshot kept with
 * the version; creates restore that instead of booting, with start_cmd
 * already running. Versions without them are not captured: a plain gvisor
 * boot is no slower than a restore.
 *
 * All work runs in the background, one template at a time; until a capture is
 * ready, or when one fails, sandboxes of the template boot as before. A failed
 * capture is tried again later (CAPTURE_RETRY_MS), and on a template's next change.
 */
export class TemplateCaptures {
  readonly deps: TemplateCaptureDeps;
  /** Template id -> its capture, so a create does not read the store. */
  readonly #held = new Map<string, TemplateCapture>();
  readonly #queued = new Set<string>();
  /** Template id -> the version whose capture failed and how often, for the tries after it. */
  readonly #failed = new Map<string, { versionKey: string; tries: number }>();
  readonly #retries = new Set<NodeJS.Timeout>();
  #queue: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(deps: TemplateCaptureDeps) {
    this.deps = deps;
  }

  get #engine(): SnapshotEngine | undefined {
    return this.deps.driver.snapshots;
  }

  get #on(): boolean {
    return this.deps.enabled && this.#engine !== undefined;
  }

  /**
   * After a (re)start: keeps captures whose files are complete and were taken under the engine
   * settings of now, drops the rest, and captures team template versions that have none (curated
   * templates are captured after their first use).
   */
  async start(): Promise<void> {
    const { store } = this.deps;
    const engine = this.#engine;
    const kept = [...(await store.withCapture()), ...this.deps.curated.entries().map(([id, capture]) => ({ id, deleted: false, capture }))];
    for (const r of kept) {
      const files = !r.deleted && this.#on ? await engine!.inspect(r.capture.id) : undefined;
      if (files && !files.stale) {
        this.#held.set(r.id, r.capture);
        continue;
      }
      await this.#record(r.id, null);
      await engine?.delete(r.capture.id);
    }
    if (!this.#on) return;
    for (const id of await store.builtIds()) this.settle(id);
  }

  /** Brings the template's capture in line with its current version (or removes it): queued, in the background. */
  settle(templateId: string): void {
    if (this.#closed || !this.#on || this.#queued.has(templateId)) return;
    this.#queued.add(templateId);
    this.#queue = this.#queue
      .then(() => {
        this.#queued.delete(templateId);
        return this.#closed ? undefined : this.#settle(templateId);
      })
      .catch((err) => this.deps.log.warn({ template: templateId, err: String(err) }, 'template capture failed; its sandboxes boot until a later try succeeds'));
  }

  /** The capture held of a template (of whichever version). */
  held(templateId: string): TemplateCapture | undefined {
    return this.#held.get(templateId);
  }

  /**
   * The capture a sandbox of this template version can be restored from. A curated template with a
   * start or ready command that has none (or one of an older version) is captured from here on, in the background.
   */
  lookup(template: TemplateInfo): string | undefined {
    const c = this.#held.get(template.id);
    if (c?.versionKey === template.versionKey) return c.id;
    if (isCurated(template.id) && wantsCapture(template)) this.settle(template.id);
    return undefined;
  }

  /** Starts spec as a restore of the capture; false (capture dropped) when that fails, and the caller boots instead. */
  async restore(spec: SandboxSpec, templateId: string, captureId: string): Promise<boolean> {
    try {
      await this.#engine!.createFrom(spec, captureId);
      return true;
    } catch (err) {
      this.deps.log.warn({ template: templateId, capture: captureId, err: String(err) }, 'restoring from the template capture failed; dropping it and booting instead');
      if (this.#held.get(templateId)?.id === captureId) {
        this.#held.delete(templateId);
        await this.#record(templateId, null).catch(() => undefined);
        await this.#engine!.delete(captureId).catch(() => undefined);
      }
      return false;
    }
  }

  /** Ends background work; captures stay on disk for the next start. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#retries) clearTimeout(t);
    this.#retries.clear();
    await this.#queue;
  }

  async #settle(templateId: string): Promise<void> {
    const engine = this.#engine!;
    const target = await this.#wanted(templateId);
    const want = target && wantsCapture(target.info) ? target.info.versionKey : undefined;
    const held = this.#held.get(templateId);
    if (held && held.versionKey === want) return;
    if (held) {
      this.#held.delete(templateId);
      await this.#record(templateId, null);
      await engine.delete(held.id);
    }
    if (!target || !want) {
      this.#failed.delete(templateId);
      return;
    }
    const started = performance.now();
    const capture = await this.#capture(engine, target.teamId, target.info).catch((err: unknown) => {
      this.#retryLater(templateId, want);
      throw err;
    });
    this.#failed.delete(templateId);
    // A rebuild or delete during the capture queued another settle, which drops this one if it is stale.
    await this.#record(templateId, capture);
    this.#held.set(templateId, capture);
    this.deps.log.info({ template: templateId, capture: capture.id, ms: Math.round(performance.now() - started) }, 'template captured');
  }

  /** Settles the template again after the delay its failed tries so far call for; none after the last. */
  #retryLater(templateId: string, versionKey: string): void {
    const before = this.#failed.get(templateId);
    const tries = before?.versionKey === versionKey ? before.tries + 1 : 1;
    this.#failed.set(templateId, { versionKey, tries });
    const delay = CAPTURE_RETRY_MS[tries - 1];
    if (delay === undefined || this.#closed) return;
    const timer = setTimeout(() => {
      this.#retries.delete(timer);
      this.settle(templateId);
    }, delay);
    timer.unref();
    this.#retries.add(timer);
  }

  /** The version a template's capture should be of: a team template's current one, a curated template's (built by the use that asked for the capture). */
  async #wanted(templateId: string): Promise<{ teamId: string; info: TemplateInfo } | undefined> {
    const { store, templates } = this.deps;
    if (isCurated(templateId)) return templates.curated.has(templateId) ? { teamId: CURATED_OWNER, info: await templates.resolve(CURATED_OWNER, templateId) } : undefined;
    const t = await store.get(templateId);
    return t?.version ? { teamId: t.teamId, info: await templates.resolve(t.teamId, t.id) } : undefined;
  }

  #record(templateId: string, capture: TemplateCapture | null): Promise<void> {
    return isCurated(templateId) ? this.deps.curated.set(templateId, capture) : this.deps.store.setCapture(templateId, capture);
  }

  /** Boots a sandbox of the version, waits for it to be ready, and checkpoints it into a new engine snapshot. */
  async #capture(engine: SnapshotEngine, teamId: string, info: TemplateInfo): Promise<TemplateCapture> {
    const { driver, agents } = this.deps;
    const id = newId();
    const net = await this.deps.network?.prepare({ teamId, sandboxId: id, templateRoot: info.rootfs, network: null, secrets: {} });
    try {
      const created = driver.create(templateSandboxSpec(id, info, net));
      await Promise.all([created, net?.ready]);
      await bootSandbox(agents, id, info);
      agents.drop(id);
      // Paused first, so the capture only links the checkpoint instead of also restoring this throwaway sandbox.
      await driver.pause(id);
      const captureId = newId();
      try {
        await engine.capture(id, captureId);
      } catch (err) {
        await engine.delete(captureId).catch(() => undefined);
        throw err;
      }
      return { id: captureId, versionKey: info.versionKey };
    } finally {
      agents.drop(id);
      await driver.destroy(id).catch((err) => this.deps.log.error({ sandbox: id, err: String(err) }, 'template capture: cleanup failed; reconciliation retries'));
      await net?.abort().catch(() => undefined);
    }
  }
}

function wantsCapture(v: Pick<TemplateVersion, 'startCmd' | 'readyCmd'>): boolean {
  return v.startCmd !== undefined || v.readyCmd !== undefined;
}

function isCurated(templateId: string): boolean {
  return templateId.startsWith('platform/');
}

/** Whom a curated template's capture sandbox is set up for (its network namespace): no team owns it. */
const CURATED_OWNER = 'platform';
