import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import { notFound } from '../../errors.ts';
import { taggedSandboxId } from '../../ids.ts';
import type { NodeLoad, NodeRecord, NodeReport, NodeState, NodeStore } from '../../store/nodes.ts';
import type { SandboxStore } from '../../store/sandboxes.ts';

export interface NodeView extends NodeRecord {
  /** `lost` when silent past the deadline, else the state an operator set. */
  status: NodeState | 'lost';
  load: NodeLoad;
}

const NO_LOAD: NodeLoad = { sandboxes: 0, vcpus: 0, memoryMib: 0 };

/** Live: not marked lost, and heard from within the deadline. */
export function isNodeLive(n: NodeRecord, now: number, lostMs: number): boolean {
  return n.lostAt === null && now - n.heartbeatAt < lostMs;
}

/**
 * The nodes of the installation as API replicas see them: registered and kept alive by heartbeats;
 * one silent past `lostMs` is lost, and its sandboxes end failed (`node_lost`), which stops their
 * metering. A lost node that heartbeats again is told to reconcile: it destroys what the store
 * no longer has live, so the API's view wins and nothing runs twice.
 */
export class NodeService {
  readonly #store: NodeStore;
  readonly #sandboxes: SandboxStore;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly lostMs: number;
  /** Since when this replica has reached the store without a failure or a gap. */
  #storeSince = 0;
  /** When this replica last swept: a long gap means its store calls hung (or it did not hold the lease). */
  #lastSweep: number | undefined;

  constructor(deps: { store: NodeStore; sandboxes: SandboxStore; clock: Clock; log: Logger; lostMs: number }) {
    this.#store = deps.store;
    this.#sandboxes = deps.sandboxes;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.lostMs = deps.lostMs;
  }

  async heartbeat(report: NodeReport): Promise<{ reconcile: boolean }> {
    const { wasLostAt } = await this.#store.heartbeat(report, this.#clock.now());
    if (wasLostAt !== null) this.#log.warn({ node: report.id }, 'node is back after being lost; it reconciles with the store');
    return { reconcile: wasLostAt !== null };
  }

  /**
   * Marks the region's silent nodes lost and fails their sandboxes (run by one replica of the region at a
   * time). Only once this replica has reached the store for a whole deadline: while the store was down no
   * heartbeat could be recorded, and silence then says nothing about the nodes. A store that hangs instead
   * of failing shows only as a gap between sweeps, so a gap restarts that deadline too.
   */
  async sweep(region: string): Promise<void> {
    const now = this.#clock.now();
    if (this.#lastSweep === undefined || now - this.#lastSweep > this.lostMs / 2) this.#storeSince = now;
    this.#lastSweep = now;
    if (now - this.#storeSince < this.lostMs) return;
    for (const id of await this.#store.markLost(region, now - this.lostMs, now)) {
      const failed = await this.#sandboxes.failOnNode(id, 'node_lost', now);
      this.#log.error({ node: id, sandboxes: failed.length }, 'node lost: its sandboxes are failed');
    }
  }

  /** The store could not be reached: the next sweep starts the deadline again, so silence is not judged until it has been reachable that long. */
  storeFailed(): void {
    this.#lastSweep = undefined;
  }

  isLive(n: NodeRecord): boolean {
    return isNodeLive(n, this.#clock.now(), this.lostMs);
  }

  async get(id: string): Promise<NodeRecord | undefined> {
    return this.#store.get(id);
  }

  async list(region?: string): Promise<NodeView[]> {
    const nodes = await this.#store.list(region);
    const load = await this.#store.load(nodes.map((n) => n.id));
    return nodes.map((n) => ({ ...n, status: this.isLive(n) ? n.state : 'lost', load: load.get(n.id) ?? NO_LOAD }));
  }

  /** Each node's live sandboxes (tagged ids) and their status. */
  async sandboxesByNode(): Promise<Map<string, { id: string; status: string }[]>> {
    const out = new Map<string, { id: string; status: string }[]>();
    for (const r of await this.#sandboxes.liveByNode()) {
      const list = out.get(r.nodeId) ?? [];
      list.push({ id: taggedSandboxId(r.region, r.id), status: r.status });
      out.set(r.nodeId, list);
    }
    return out;
  }

  async setState(id: string, state: NodeState): Promise<void> {
    if (!(await this.#store.setState(id, state))) throw notFound(`node '${id.slice(0, 64)}' not found`);
    this.#log.info({ node: id, state }, 'node state changed');
  }
}
