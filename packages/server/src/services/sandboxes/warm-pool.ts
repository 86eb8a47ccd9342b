import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { newId } from '../../ids.ts';
import type { WarmPoolSettings } from '../../config.ts';
import type { RuntimeDriver } from '../../runtime/driver.ts';
import type { AgentPool } from '../../runtime/agent-pool.ts';
import { bootSandbox } from '../../templates/boot.ts';
import type { PreparedNetwork, SandboxNetworkHooks } from '../../network/hooks.ts';
import type { TemplateCatalog } from '../templates/template-catalog.ts';
import { type TemplateInfo, templateSandboxSpec } from '../templates/template-info.ts';

/** A started sandbox waiting to be taken: no store row, no team, not billed. */
export interface WarmSandbox {
  id: string;
  versionKey: string;
  net?: PreparedNetwork;
}

const REFILL_DELAY_MS = 250;

export interface WarmPoolDeps {
  driver: RuntimeDriver;
  agents: AgentPool;
  templates: TemplateCatalog;
  /** The network layer (pool sandboxes get a namespace like any other). */
  network?: SandboxNetworkHooks;
  log: Logger;
  config: WarmPoolSettings;
}

interface Pool {
  target: number;
  teamId: string;
  info: TemplateInfo;
  entries: WarmSandbox[];
}

/**
 * Pre-started sandboxes per template, so a create only personalizes one (env,
 * token, name, timers, network rules) instead of booting it. Taken sandboxes
 * leave the pool for good: no sandbox ever serves two owners. Refills run one
 * sandbox at a time in the background; under memory pressure the pool shrinks.
 */
export class WarmPool {
  readonly deps: WarmPoolDeps;
  readonly #pools = new Map<string, Pool>();
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> | undefined;
  #closed = false;

  constructor(deps: WarmPoolDeps) {
    this.deps = deps;
  }

  start(): void {
    if (this.#closed) return; // a start that failed closed it before platform/base was ready
    this.#timer = setInterval(() => this.kick(), this.deps.config.intervalMs);
    this.#timer.unref();
    this.kick();
  }

  /** Runs one refill pass unless one is running. */
  kick(): void {
    if (this.#tick || this.#closed) return;
    this.#tick = this.#refill()
      .catch((err) => this.deps.log.warn({ err: String(err) }, 'warm pool refill failed'))
      .finally(() => (this.#tick = undefined));
  }

  ready(templateId: string): number {
    return this.#pools.get(templateId)?.entries.length ?? 0;
  }

  sizes(): { template_id: string; ready: number; target: number }[] {
    return [...this.#pools].map(([id, p]) => ({ template_id: id, ready: p.entries.length, target: p.target }));
  }

  /** A ready sandbox of exactly this template version, removed from the pool; undefined when none waits. */
  take(templateId: string, versionKey: string): WarmSandbox | undefined {
    const pool = this.#pools.get(templateId);
    const i = pool?.entries.findIndex((e) => e.versionKey === versionKey) ?? -1;
    if (!pool || i < 0) return undefined;
    const [entry] = pool.entries.splice(i, 1);
    // A little later, so the refill's boot does not compete with the taker's first commands for the CPU.
    setTimeout(() => this.kick(), REFILL_DELAY_MS).unref();
    return entry;
  }

  /** Drops a template's pool (the template was deleted). */
  async forget(templateId: string): Promise<void> {
    const pool = this.#pools.get(templateId);
    this.#pools.delete(templateId);
    for (const e of pool?.entries.splice(0) ?? []) await this.#destroy(e);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#tick;
    for (const pool of this.#pools.values()) for (const e of pool.entries.splice(0)) await this.#destroy(e);
  }

  async #targets(): Promise<Map<string, { target: number; teamId: string; info: TemplateInfo }>> {
    const out = new Map<string, { target: number; teamId: string; info: TemplateInfo }>();
    if (this.deps.config.baseSize > 0) {
      const info = await this.deps.templates.resolve('', undefined);
      out.set(info.id, { target: this.deps.config.baseSize, teamId: 'platform', info });
    }
    for (const t of await this.deps.templates.pooled()) out.set(t.info.id, t);
    return out;
  }

  async #refill(): Promise<void> {
    const targets = await this.#targets();
    for (const [id, pool] of this.#pools) {
      const t = targets.get(id);
      // Gone, resized or rebuilt: sandboxes of another version are never handed out.
      const stale = pool.entries.filter((e) => !t || e.versionKey !== t.info.versionKey);
      const extra = t ? Math.max(0, pool.entries.length - stale.length - t.target) : 0;
      const drop = [...stale, ...pool.entries.filter((e) => !stale.includes(e)).slice(0, extra)];
      pool.entries = pool.entries.filter((e) => !drop.includes(e));
      for (const e of drop) await this.#destroy(e);
      if (!t) this.#pools.delete(id);
    }
    for (const [id, t] of targets) {
      const pool = this.#pools.get(id) ?? { ...t, entries: [] };
      Object.assign(pool, t);
      this.#pools.set(id, pool);
    }
    if (await this.#underPressure()) {
      const fullest = [...this.#pools.values()].sort((a, b) => b.entries.length - a.entries.length)[0];
      const e = fullest?.entries.pop();
      if (e) {
        this.deps.log.warn({ sandbox: e.id }, 'warm pool: memory is low; releasing a pre-started sandbox');
        await this.#destroy(e);
      }
      return;
    }
    for (const [id, pool] of this.#pools) {
      while (!this.#closed && pool.entries.length < pool.target && this.#pools.get(id) === pool) {
        if (await this.#underPressure()) return;
        const e = await this.#start(pool);
        if (this.#closed || this.#pools.get(id) !== pool) {
          await this.#destroy(e);
          return;
        }
        pool.entries.push(e);
      }
    }
  }

  async #start(pool: Pool): Promise<WarmSandbox> {
    const { driver, agents } = this.deps;
    const { info } = pool;
    const id = newId();
    const net = await this.deps.network?.prepare({ teamId: pool.teamId, sandboxId: id, templateRoot: info.rootfs, network: null, secrets: {} });
    const entry: WarmSandbox = { id, versionKey: info.versionKey, ...(net ? { net } : {}) };
    try {
      const created = driver.create(templateSandboxSpec(id, info, net));
      await Promise.all([created, net?.ready]);
      // The agent connection is opened now, so the first exec after take does not pay for it.
      const client = await agents.get(id, 10_000);
      await bootSandbox(agents, id, info);
      // So does the shell: a fresh sandbox's first command loads it.
      await new Promise<void>((resolve) => {
        const p = client.spawn({ argv: ['/bin/sh', '-c', 'true'], user: 'user', cwd: '/', stdin: false, timeoutMs: 10_000 });
        p.once('exit', () => resolve());
        p.once('error', () => resolve());
      });
      return entry;
    } catch (err) {
      await this.#destroy(entry);
      throw err;
    }
  }

  async #destroy(e: WarmSandbox): Promise<void> {
    this.deps.agents.drop(e.id);
    await this.deps.driver.destroy(e.id).catch((err) => this.deps.log.error({ sandbox: e.id, err: String(err) }, 'warm pool: cleanup failed; reconciliation retries'));
    await e.net?.abort().catch(() => undefined);
  }

  async #underPressure(): Promise<boolean> {
    const text = await readFile('/proc/meminfo', 'utf8').catch(() => '');
    const kb = Number(text.match(/^MemAvailable:\s+(\d+)/m)?.[1]);
    return Number.isFinite(kb) && kb / 1024 < this.deps.config.minAvailableMib;
  }
}
