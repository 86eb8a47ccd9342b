import pMap from 'p-map';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { RuntimeDriver } from '../../runtime/driver.ts';
import type { LedgerChange, MeterEvent, MeterStore, SegmentRecord } from '../../store/billing.ts';
import { KeyedLock } from '../../runtime/host/keyed-lock.ts';
import { within } from '../../timeouts.ts';

/**
 * How lifecycle events move the ledger. Compute (vCPUs and memory from the sandbox's `resources`)
 * accrues while the sandbox is active; its disk accrues from creation until it is deleted or lost.
 * A restart writes no event for a sandbox that kept running, so its open segments keep accruing.
 * Snapshots hold their size from ready to deleted (see MeterStore.syncSnapshots), volumes theirs while they exist (syncVolumes).
 */
const OPENS_COMPUTE = new Set(['created', 'resumed', 'reconciled_active']);
const CLOSES_COMPUTE = new Set(['paused', 'auto_paused', 'reconciled_paused', 'failed', 'deleted', 'auto_deleted']);
const ENDS_DISK = new Set(['failed', 'deleted', 'auto_deleted']);
const SAMPLES_DISK = new Set(['created', 'paused', 'auto_paused', 'resumed', 'reconciled_active', 'reconciled_paused']);

const SANDBOX_DISK = 'sandbox_disk';
const BATCH = 500;
const STATS_TIMEOUT_MS = 5000;
const MIB = 1024 * 1024;

export interface Usage {
  vcpuSeconds: number;
  memoryMibSeconds: number;
  storageMibSeconds: number;
}

export interface MeteringDeps {
  store: MeterStore;
  driver: Pick<RuntimeDriver, 'stats'>;
  clock: Clock;
  log: Logger;
  /** Clock time between disk size samples. */
  sampleIntervalMs: number;
}

/** Turns the sandbox_events log and disk size samples into the metering ledger. */
export class MeteringService {
  readonly deps: MeteringDeps;
  readonly #lock = new KeyedLock();
  #lastSample = Number.NEGATIVE_INFINITY;

  constructor(deps: MeteringDeps) {
    this.deps = deps;
  }

  /** Meters every committed lifecycle event not metered yet, then samples disk sizes when due. */
  sync(): Promise<void> {
    return this.#lock.run('ledger', async () => {
      await this.#drain();
      await this.deps.store.syncSnapshots();
      const now = this.deps.clock.now();
      await this.deps.store.syncVolumes(now);
      if (now - this.#lastSample >= this.deps.sampleIntervalMs) {
        this.#lastSample = now;
        await this.#sampleDisks();
      }
    });
  }

  async #drain(): Promise<void> {
    for (;;) {
      const events = await this.deps.store.pendingEvents(BATCH);
      if (events.length === 0) return;
      const changes: LedgerChange[] = [];
      for (const e of events) changes.push(...(await this.#changesFor(e)));
      await this.deps.store.apply(changes, events[0]!.seq, events[events.length - 1]!.seq);
    }
  }

  async #changesFor(e: MeterEvent): Promise<LedgerChange[]> {
    const out: LedgerChange[] = [];
    const subject = { teamId: e.teamId, subjectKind: SANDBOX_DISK, subjectId: e.sandboxId, at: e.at };
    if (CLOSES_COMPUTE.has(e.type)) out.push({ kind: 'close', subjectId: e.sandboxId, resources: ['vcpu', 'memory'], at: e.at });
    if (ENDS_DISK.has(e.type)) out.push({ kind: 'close', subjectId: e.sandboxId, resources: ['storage'], at: e.at });
    if (OPENS_COMPUTE.has(e.type)) {
      out.push({ kind: 'open', ...subject, subjectKind: 'sandbox', resource: 'vcpu', quantity: e.resources.vcpu_count });
      out.push({ kind: 'open', ...subject, subjectKind: 'sandbox', resource: 'memory', quantity: e.resources.memory_mib });
    }
    if (SAMPLES_DISK.has(e.type)) {
      // A sandbox already gone by the time its event is metered has no size to read; its
      // disk segment still opens (at 0 bytes) so the delete that follows closes it.
      const bytes = await this.#diskBytes(e.sandboxId);
      out.push({ kind: 'open', ...subject, resource: 'storage', quantity: bytes ?? 0 });
      if (bytes !== undefined) out.push({ kind: 'resize', subjectId: e.sandboxId, resource: 'storage', quantity: bytes, at: e.at });
    }
    return out;
  }

  async #sampleDisks(): Promise<void> {
    // Several at once: a host may hold 10,000 sandboxes, the first sample comes before the server listens, and billing reads wait on it.
    const disks = (await this.deps.store.openStorage()).filter((seg) => seg.subjectKind === SANDBOX_DISK);
    await pMap(
      disks,
      async (seg) => {
        const bytes = await this.#diskBytes(seg.subjectId);
        if (bytes !== undefined && bytes !== seg.quantity) await this.deps.store.resizeStorage(seg.subjectId, bytes, this.deps.clock.now());
      },
      { concurrency: 8 },
    );
  }

  /** Bounded in time: the ledger lock waits on it, and every billing read waits on the lock. */
  async #diskBytes(id: string): Promise<number | undefined> {
    try {
      return (await within(this.deps.driver.stats(id), STATS_TIMEOUT_MS)).diskBytes;
    } catch (err) {
      this.deps.log.debug({ sandbox: id, err: String(err) }, 'disk size not available for metering');
      return undefined;
    }
  }
}

/** Usage accrued by the segments within [from, to), in total and per subject. */
export function usageOf(segments: SegmentRecord[], from: number, to: number): { total: Usage; bySubject: Map<string, Usage> } {
  const total: Usage = { vcpuSeconds: 0, memoryMibSeconds: 0, storageMibSeconds: 0 };
  const bySubject = new Map<string, Usage>();
  for (const s of segments) {
    const ms = Math.min(s.end ?? to, to) - Math.max(s.start, from);
    if (ms <= 0) continue;
    let u = bySubject.get(s.subjectId);
    if (!u) bySubject.set(s.subjectId, (u = { vcpuSeconds: 0, memoryMibSeconds: 0, storageMibSeconds: 0 }));
    if (s.resource === 'vcpu') {
      const v = (s.quantity * ms) / 1000;
      u.vcpuSeconds += v;
      total.vcpuSeconds += v;
    } else if (s.resource === 'memory') {
      const v = (s.quantity * ms) / 1000;
      u.memoryMibSeconds += v;
      total.memoryMibSeconds += v;
    } else {
      const v = (s.quantity * ms) / 1000 / MIB;
      u.storageMibSeconds += v;
      total.storageMibSeconds += v;
    }
  }
  return { total, bySubject };
}
