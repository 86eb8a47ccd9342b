import { existsSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { availableParallelism, totalmem } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { within } from '../timeouts.ts';
import { API_AUDIENCE, type TokenCache } from '../internal-token.ts';
import type { NodeReport } from '../schemas/node.ts';
import type { NodeLoad } from '../store/nodes.ts';
import type { TemplateStore } from '../store/templates.ts';
import type { InternalChannel } from './internal-channel.ts';

const HEARTBEAT_MS = 1000;
/** A store read for the report waits no longer than this: past it, the last value read is sent. */
const STORE_READ_MS = 500;
const TEMPLATES_REFRESH_MS = 15_000;
const MIB = 1024 * 1024;

export interface NodeAgentDeps {
  config: Config;
  /** Where API replicas reach this node. */
  url: string;
  engine: string;
  templates: TemplateStore;
  /** What this node's live sandboxes hold. */
  allocated: () => Promise<NodeLoad>;
  /** Templates built elsewhere, and snapshots taken elsewhere, that this node holds a copy of. */
  copies: { held(): string[] };
  tokens: TokenCache;
  channel: InternalChannel;
  log: Logger;
  /** The API marked this node lost while it was silent: destroy what the store no longer has live. */
  reconcile: () => Promise<void>;
}

/**
 * A node's side of membership: it registers with its region's API replicas and heartbeats every
 * second with its capacity, labels and the template versions whose files it holds, trying the next
 * replica when one does not answer.
 */
export class NodeAgent {
  readonly #deps: NodeAgentDeps;
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #reconciling: Promise<void> | undefined;
  #next = 0;
  #templates: { at: number; keys: string[] } = { at: 0, keys: [] };
  #reported = false;
  #lastAllocated: NodeReport['allocated'] = { sandboxes: 0, vcpus: 0, memory_mib: 0 };

  constructor(deps: NodeAgentDeps) {
    this.#deps = deps;
  }

  start(): void {
    this.#timer = setInterval(() => {
      this.#beating ??= this.beat().finally(() => (this.#beating = undefined));
    }, HEARTBEAT_MS);
    this.#timer.unref();
    this.#beating = this.beat().finally(() => (this.#beating = undefined));
  }

  /** Whether an API replica accepted the last heartbeat. */
  get registered(): boolean {
    return this.#reported;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#beating;
    await this.#reconciling;
  }

  /** One heartbeat; a failure is logged once per outage and retried on the next tick. */
  async beat(): Promise<void> {
    const { config, tokens, log } = this.#deps;
    const urls = config.cluster.apiUrls;
    let body: string;
    try {
      body = JSON.stringify(await this.#report());
    } catch (err) {
      log.warn({ err: String(err) }, 'heartbeat skipped: this node could not describe itself');
      return;
    }
    // Each replica once per beat, from the one that answered last.
    const first = this.#next;
    for (let i = 0; i < urls.length; i++) {
      const at = (first + i) % urls.length;
      const url = urls[at]!;
      try {
        const res = await this.#deps.channel.fetch(new URL('/internal/nodes/heartbeat', url), {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.for(API_AUDIENCE)}` },
          body,
          // Each try well inside the deadline, so one slow replica cannot make this node look silent.
          signal: AbortSignal.timeout(Math.min(2000, Math.max(500, Math.floor(config.cluster.lostMs / 3)))),
        });
        if (!res.ok) throw new Error(`answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
        const answer = (await res.json()) as { reconcile: boolean };
        if (!this.#reported) log.info({ api: url }, 'node registered');
        this.#reported = true;
        this.#next = at;
        // Beside the heartbeats, not in their way: a node silent while it reconciles would be judged lost again.
        if (answer.reconcile)
          this.#reconciling ??= this.#deps
            .reconcile()
            .catch((err) => log.error({ err: String(err) }, 'reconcile after being lost failed'))
            .finally(() => (this.#reconciling = undefined));
        return;
      } catch (err) {
        if (this.#reported || i === urls.length - 1) log.warn({ api: url, err: String(err) }, 'heartbeat failed');
      }
    }
    this.#reported = false;
  }

  async #report(): Promise<NodeReport> {
    const { config, url, engine } = this.#deps;
    const c = config.cluster;
    const fs = await statfs(config.dataDir);
    return {
      id: c.nodeId!,
      region: config.region,
      url,
      vcpus: c.vcpus ?? availableParallelism(),
      memory_mib: c.memoryMib ?? Math.floor(totalmem() / MIB),
      disk_mib: Math.floor((fs.bavail * fs.bsize) / MIB),
      max_sandboxes: c.maxSandboxes,
      engines: [engine],
      labels: c.labels,
      templates: await this.#heldTemplates(),
      allocated: await this.#allocated(),
    };
  }

  /** What its sandboxes hold, or what they held at the last read while the store cannot be read: the heartbeat never waits for the store. */
  async #allocated(): Promise<NodeReport['allocated']> {
    try {
      const a = await within(this.#deps.allocated(), STORE_READ_MS);
      this.#lastAllocated = { sandboxes: a.sandboxes, vcpus: a.vcpus, memory_mib: a.memoryMib };
    } catch (err) {
      this.#deps.log.warn({ err: String(err) }, 'heartbeat: allocation not readable, sending the last one');
    }
    return this.#lastAllocated;
  }

  /** Versions whose layers are all on this node's own disk (rescanned every so often), and its copies of others. */
  async #heldTemplates(): Promise<string[]> {
    const now = Date.now();
    if (now - this.#templates.at >= TEMPLATES_REFRESH_MS) {
      const own = (p: string) => p.startsWith(`${this.#deps.config.dataDir}/`) && existsSync(p);
      // While the store cannot be read, the last scan stands and the next heartbeat tries again.
      const versions = await within(this.#deps.templates.builtVersions(), STORE_READ_MS).catch(() => undefined);
      if (versions) this.#templates = { at: now, keys: versions.filter((v) => v.layers.length > 0 && v.layers.every(own)).map((v) => v.key) };
    }
    return [...new Set([...this.#templates.keys, ...this.#deps.copies.held()])];
  }
}
