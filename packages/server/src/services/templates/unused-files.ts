import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { TemplateStore } from '../../store/templates.ts';
import type { ImageStore } from '../../templates/images/image-store.ts';
import type { LayerCache } from '../../templates/layer-cache.ts';

export interface UnusedFilesDeps {
  store: TemplateStore;
  layers: LayerCache;
  images: ImageStore;
  /** Template paths the engine's sandboxes and snapshots stack on; undefined when the engine cannot tell. */
  enginePaths: (() => Promise<string[]>) | undefined;
  /** Whether a template build runs in this process (its layers are not recorded anywhere yet). */
  building: () => boolean;
  clock: Clock;
  log: Logger;
  graceMs: number;
}

const MAX_INTERVAL_MS = 60_000;
const MIN_INTERVAL_MS = 250;

/**
 * Collects pulled images and template layers of this host's data dir that nothing uses: not the
 * current version of any live template (of any node: layers and images are content-addressed, so a
 * key is the same files everywhere), and not a sandbox or snapshot of this engine. One unused for the
 * whole grace period (seen unused at every sweep since) is removed; a restart starts the clock again.
 */
export class UnusedFiles {
  readonly #deps: UnusedFilesDeps;
  /** Key -> when it was first seen unused. */
  readonly #unusedSince = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;

  constructor(deps: UnusedFilesDeps) {
    this.#deps = deps;
  }

  start(): void {
    if (!this.#deps.enginePaths) {
      this.#deps.log.warn('the engine cannot tell which template files its sandboxes use: unused images and layers are not collected');
      return;
    }
    const every = Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, Math.floor(this.#deps.graceMs / 4)));
    this.#timer = setInterval(() => {
      this.#sweeping ??= this.sweep()
        .catch((err) => this.#deps.log.warn({ err: String(err) }, 'collecting unused template files failed'))
        .finally(() => (this.#sweeping = undefined));
    }, every);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sweeping;
  }

  /** One pass: marks what is unused, removes what has been unused for the grace period. */
  async sweep(): Promise<void> {
    const { store, layers, images, enginePaths, building, clock, log, graceMs } = this.#deps;
    if (!enginePaths || building()) return;
    const used = new Set<string>();
    // A path's key is its parent's name: `<layers>/<key>/root`, `<images>/rootfs/<hex>/rootfs`.
    const use = (p: string) => used.add(basename(dirname(p)));
    for (const v of await store.builtVersions()) {
      use(v.baseRoot);
      v.layers.forEach(use);
    }
    (await enginePaths()).forEach(use);
    const now = clock.now();
    const candidates = [...(await layers.keys()).map((key) => ({ key, kind: 'layer' as const })), ...(await images.unpacked()).map((key) => ({ key, kind: 'image' as const }))];
    const seen = new Set<string>();
    for (const { key, kind } of candidates) {
      seen.add(key);
      if (used.has(key)) {
        this.#unusedSince.delete(key);
        continue;
      }
      const since = this.#unusedSince.get(key) ?? now;
      this.#unusedSince.set(key, since);
      if (now - since < graceMs) continue;
      // A build may have started since the check above: its layers are not recorded yet.
      if (building()) return;
      if (kind === 'layer') await layers.remove(key);
      else await images.remove(key);
      this.#unusedSince.delete(key);
      log.info({ kind, key }, 'removed an unused template file');
    }
    for (const key of this.#unusedSince.keys()) if (!seen.has(key)) this.#unusedSince.delete(key);
  }
}
