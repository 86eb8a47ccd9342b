import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { RuntimeDriver } from '../../runtime/driver.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';

export interface MetricPoint {
  at: number;
  /** Share of one CPU over the last interval (200 = two CPUs busy); null without a previous sample. */
  cpuPercent: number | null;
  memoryBytes: number;
  diskBytes: number;
  /** Cumulative bytes through the sandbox's veth, as the sandbox sees them. */
  netRxBytes: number | null;
  netTxBytes: number | null;
  /** Bytes per second over the last interval. */
  netRxRate: number | null;
  netTxRate: number | null;
}

interface Raw {
  at: number;
  cpuNs: number;
  rx?: number;
  tx?: number;
}

export interface SandboxMetricsDeps {
  liveSandboxes: () => Promise<SandboxRecord[]>;
  driver: Pick<RuntimeDriver, 'stats'>;
  traffic: (id: string) => Promise<{ rxBytes: number; txBytes: number } | undefined>;
  clock: Clock;
  log: Logger;
  intervalMs: number;
  windowMs: number;
}

const STATS_TIMEOUT_MS = 2000;

/**
 * Samples every active sandbox's cgroup (CPU, memory), disk usage and veth counters each interval
 * and keeps the points of the last window in memory (a restart starts the series afresh).
 */
export class SandboxMetrics {
  readonly deps: SandboxMetricsDeps;
  readonly #series = new Map<string, MetricPoint[]>();
  readonly #last = new Map<string, Raw>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(deps: SandboxMetricsDeps) {
    this.deps = deps;
  }

  start(): void {
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = this.sample()
        .catch((err) => this.deps.log.warn({ err: String(err) }, 'sandbox metrics: sampling failed'))
        .finally(() => (this.#running = undefined));
    }, this.deps.intervalMs);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }

  /** Points of one sandbox at or after `since`, oldest first. */
  series(id: string, since = 0): MetricPoint[] {
    return (this.#series.get(id) ?? []).filter((p) => p.at >= since);
  }

  async sample(): Promise<void> {
    const live = await this.deps.liveSandboxes();
    const ids = new Set(live.map((r) => r.id));
    for (const id of this.#series.keys()) if (!ids.has(id)) this.#series.delete(id);
    for (const id of this.#last.keys()) if (!ids.has(id)) this.#last.delete(id);
    const now = this.deps.clock.now();
    await Promise.all(live.filter((r) => r.status === 'active').map((r) => this.#sampleOne(r.id, now)));
    for (const [id, points] of this.#series) {
      const cut = points.findIndex((p) => p.at >= now - this.deps.windowMs);
      if (cut > 0) points.splice(0, cut);
      else if (cut < 0) this.#series.delete(id);
    }
  }

  async #sampleOne(id: string, now: number): Promise<void> {
    const [stats, net] = await Promise.all([withTimeout(this.deps.driver.stats(id)), this.deps.traffic(id).catch(() => undefined)]);
    if (!stats) return;
    const prev = this.#last.get(id);
    // Only consecutive samples make a rate: a pause in between (or a restore, which restarts the counters) does not.
    const consecutive = prev && now - prev.at <= this.deps.intervalMs * 2.5 ? prev : undefined;
    const secs = consecutive ? (now - consecutive.at) / 1000 : 0;
    const rate = (cur: number | undefined, before: number | undefined) => (cur !== undefined && before !== undefined && secs > 0 && cur >= before ? (cur - before) / secs : null);
    const cpuDelta = consecutive ? stats.cpuUsageNs - consecutive.cpuNs : -1;
    const point: MetricPoint = {
      at: now,
      cpuPercent: cpuDelta >= 0 && secs > 0 ? Math.round((cpuDelta / 1e7 / secs) * 10) / 10 : null,
      memoryBytes: stats.memoryBytes,
      diskBytes: stats.diskBytes,
      netRxBytes: net?.rxBytes ?? null,
      netTxBytes: net?.txBytes ?? null,
      netRxRate: rate(net?.rxBytes, consecutive?.rx),
      netTxRate: rate(net?.txBytes, consecutive?.tx),
    };
    this.#last.set(id, { at: now, cpuNs: stats.cpuUsageNs, rx: net?.rxBytes, tx: net?.txBytes });
    let points = this.#series.get(id);
    if (!points) this.#series.set(id, (points = []));
    points.push(point);
  }
}

/** A stuck engine read must not hold up the other sandboxes' samples. */
async function withTimeout<T>(p: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), STATS_TIMEOUT_MS)));
  try {
    return await Promise.race([p.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
