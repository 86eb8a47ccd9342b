import type { Clock } from '../../clock.ts';
import { unavailable } from '../../errors.ts';
import type { NodeRecord, NodeStore } from '../../store/nodes.ts';
import { isNodeLive } from './nodes.ts';

export interface PlacementNeed {
  region: string;
  vcpus: number;
  memoryMib: number;
  /** What it starts from that nodes may already hold (a team template's version key, a copy of a fork's snapshot): a node holding it is preferred. */
  templateKey?: string;
  /** The node holding the snapshot a fork starts from: preferred while it takes sandboxes and has room; elsewhere the snapshot is shipped from it, so it must be live. */
  holder?: string;
  /** Only this node: the one keeping the volumes the sandbox mounts (503 while it is lost or takes no sandboxes). */
  node?: string;
  /** What `node` is to the caller when not the volumes' node, e.g. 'the move target' (in the error messages). */
  nodeRole?: string;
  /** Never this node (the one a drain moves sandboxes off). */
  exclude?: string;
}

/** Preference for a node that already holds the template's files, in units of memory fraction. */
const TEMPLATE_BONUS = 0.25;
/** A fork's snapshot holder wins whenever it has room: shipping the snapshot costs more than any imbalance. */
const HOLDER_BONUS = 1;
/** Node reports change once a second; a burst of creates reads them once. */
const NODES_TTL_MS = 250;

/**
 * Chooses the node a new sandbox runs on: among the region's live, ready nodes with room (memory, and
 * the node's sandbox limit), the least loaded by memory, preferring one that has the template. A
 * node's load is what it reported in its last heartbeat (one row per node to read, not every sandbox),
 * plus the placements this replica has in flight, so a burst spreads. Another replica's placements of
 * the last second are not seen yet: capacity can be overshot by that much, never by more.
 */
export class Placement {
  readonly #store: NodeStore;
  readonly #clock: Clock;
  readonly #lostMs: number;
  readonly #pending = new Map<string, { count: number; memoryMib: number }>();
  readonly #nodes = new Map<string, { at: number; list: Promise<NodeRecord[]> }>();

  constructor(deps: { store: NodeStore; clock: Clock; lostMs: number }) {
    this.#store = deps.store;
    this.#clock = deps.clock;
    this.#lostMs = deps.lostMs;
  }

  #regionNodes(region: string, now: number): Promise<NodeRecord[]> {
    let hit = this.#nodes.get(region);
    if (!hit || now - hit.at > NODES_TTL_MS) {
      hit = { at: now, list: this.#store.list(region) };
      hit.list.catch(() => this.#nodes.delete(region));
      this.#nodes.set(region, hit);
    }
    return hit.list;
  }

  /** The chosen node, held as pending until `release` (call it once the node has answered). */
  async choose(need: PlacementNeed): Promise<{ node: NodeRecord; release: () => void }> {
    const now = this.#clock.now();
    const all = await this.#regionNodes(need.region, now);
    const live = all.filter((n) => isNodeLive(n, now, this.#lostMs));
    if (need.holder !== undefined && !live.some((x) => x.id === need.holder)) {
      throw unavailable(`node '${need.holder}', which holds the snapshot, is lost or not reachable, so the snapshot cannot be shipped to another node; retry when it is back`);
    }
    const role = need.nodeRole ?? 'which keeps the volumes the sandbox mounts';
    if (need.node !== undefined && !live.some((x) => x.id === need.node)) {
      throw unavailable(`node '${need.node}', ${role}, is lost${need.nodeRole ? '' : '; they come back with it (nothing was deleted), retry then'}`);
    }
    const candidates = live.filter((n) => n.state === 'ready' && n.id !== need.exclude && (need.node === undefined || n.id === need.node));
    if (need.node !== undefined && candidates.length === 0) throw unavailable(`node '${need.node}', ${role}, takes no sandboxes now (cordoned or draining)`);
    if (candidates.length === 0) throw unavailable(all.length === 0 ? `region '${need.region}' has no nodes` : `no node of region '${need.region}' is ready to take sandboxes`);
    let best: { node: NodeRecord; score: number } | undefined;
    for (const node of candidates) {
      const held = node.allocated;
      const pending = this.#pending.get(node.id) ?? { count: 0, memoryMib: 0 };
      const count = held.sandboxes + pending.count;
      const memory = held.memoryMib + pending.memoryMib + need.memoryMib;
      if (node.maxSandboxes > 0 && count >= node.maxSandboxes) continue;
      if (memory > node.memoryMib) continue;
      const score = memory / node.memoryMib - (need.templateKey && node.templates.includes(need.templateKey) ? TEMPLATE_BONUS : 0) - (node.id === need.holder ? HOLDER_BONUS : 0);
      if (!best || score < best.score) best = { node, score };
    }
    if (!best) throw unavailable(need.node === undefined ? `every node of region '${need.region}' is full; retry later` : `node '${need.node}', ${role}, is full; retry later`);
    const id = best.node.id;
    const p = this.#pending.get(id) ?? { count: 0, memoryMib: 0 };
    p.count += 1;
    p.memoryMib += need.memoryMib;
    this.#pending.set(id, p);
    let released = false;
    return {
      node: best.node,
      release: () => {
        if (released) return;
        released = true;
        p.count -= 1;
        p.memoryMib -= need.memoryMib;
        if (p.count === 0) this.#pending.delete(id);
      },
    };
  }
}
