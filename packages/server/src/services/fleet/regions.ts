import type { Clock } from '../../clock.ts';
import { unavailable } from '../../errors.ts';
import type { RegionEndpoint, RegionStore } from '../../store/regions.ts';

export interface RegionView {
  name: string;
  api_url: string;
}

/** The endpoint list is read at most this often per replica. */
const CACHE_MS = 1000;

/**
 * The regions of the installation: this one, and those whose API replicas announce themselves in
 * the shared store. A region is known once any replica of it has announced itself; it is reachable
 * while one has done so within `liveMs`.
 */
export class RegionService {
  readonly own: string;
  readonly #store: RegionStore | undefined;
  readonly #clock: Clock;
  readonly #liveMs: number;
  readonly #ownUrl: () => string;
  #cache: { at: number; endpoints: RegionEndpoint[] } | undefined;
  #next = 0;

  /** `store` absent: a single host, its own region only. */
  constructor(deps: { own: string; ownUrl: () => string; store?: RegionStore; clock: Clock; liveMs: number }) {
    this.own = deps.own;
    this.#ownUrl = deps.ownUrl;
    this.#store = deps.store;
    this.#clock = deps.clock;
    this.#liveMs = deps.liveMs;
  }

  async announce(): Promise<void> {
    await this.#store?.announce(this.#ownUrl(), this.own, this.#clock.now());
  }

  async withdraw(): Promise<void> {
    await this.#store?.withdraw(this.#ownUrl());
  }

  async #endpoints(): Promise<RegionEndpoint[]> {
    if (!this.#store) return [];
    const now = this.#clock.now();
    if (!this.#cache || now - this.#cache.at > CACHE_MS) this.#cache = { at: now, endpoints: await this.#store.list() };
    return this.#cache.endpoints;
  }

  /** Every known region with a URL to reach it (a live replica's, else the last one announced); this one first. */
  async list(): Promise<RegionView[]> {
    const now = this.#clock.now();
    const byRegion = new Map<string, RegionEndpoint>();
    for (const e of await this.#endpoints()) {
      if (e.region === this.own) continue;
      const cur = byRegion.get(e.region);
      if (!cur || (now - cur.heartbeatAt >= this.#liveMs && e.heartbeatAt > cur.heartbeatAt)) byRegion.set(e.region, e);
    }
    return [{ name: this.own, api_url: this.#ownUrl() }, ...[...byRegion.values()].map((e) => ({ name: e.region, api_url: e.url }))];
  }

  async known(region: string): Promise<boolean> {
    return region === this.own || (await this.#endpoints()).some((e) => e.region === region);
  }

  /** A live API replica of another region, taken in turn; 503 when none is. */
  async endpoint(region: string): Promise<string> {
    const all = (await this.#endpoints()).filter((e) => e.region === region);
    if (all.length === 0) throw unavailable(`region '${region.slice(0, 64)}' has no API replica`);
    const now = this.#clock.now();
    const live = all.filter((e) => now - e.heartbeatAt < this.#liveMs);
    if (live.length === 0) throw unavailable(`region '${region}' is not reachable: none of its API replicas has answered for ${Math.round(this.#liveMs / 1000)} s`);
    return live[this.#next++ % live.length]!.url;
  }
}
