import { isErrorCode } from '../error-codes.ts';
import { ApiError } from '../errors.ts';
import { isNodeLive } from '../services/fleet/nodes.ts';
import type { NodeRecord, NodeStore } from '../store/nodes.ts';
import type { InternalChannel } from './internal-channel.ts';
import { INTERNAL_HEADER, nodeAudience, type TokenCache } from '../internal-token.ts';

/** Where a sandbox lives is remembered (bounded) until a sandbox moves off that node. */
const CACHE_MAX = 50_000;
/** The node list is read at most this often per replica. */
const NODES_TTL_MS = 1000;

/**
 * What an API replica knows of nodes: which node holds a sandbox, snapshot or build (from the store,
 * cached), how to reach it (URL, a signed token), and whether it is live.
 */
export class NodeDirectory {
  readonly #store: NodeStore;
  readonly #tokens: TokenCache;
  readonly #lostMs: number;
  /** Sandbox -> its node, with the node's `movedOutAt` read before the location was: the entry holds while that is unchanged. */
  readonly #sandboxes = new Map<string, { nodeId: string; mark: number | null }>();
  #nodes: { at: number; byId: Map<string, NodeRecord> } | undefined;
  #loading: Promise<Map<string, NodeRecord>> | undefined;
  /** How nodes are reached (its kept-alive connections serve the forwarding path). */
  readonly channel: InternalChannel;

  constructor(store: NodeStore, tokens: TokenCache, lostMs: number, channel: InternalChannel) {
    this.channel = channel;
    this.#store = store;
    this.#tokens = tokens;
    this.#lostMs = lostMs;
  }

  /** The node holding a live sandbox (bare id); undefined when there is no such sandbox or it has no node. */
  async ofSandbox(id: string): Promise<NodeRecord | undefined> {
    const hit = this.#sandboxes.get(id);
    if (hit) {
      const n = await this.node(hit.nodeId);
      // A sandbox moved off that node since (drain): where it is now is read again.
      if (n && n.movedOutAt === hit.mark) return n;
    }
    const before = await this.#list();
    const found = await this.#store.sandboxNode(id);
    if (!found) return undefined;
    if (!hit && this.#sandboxes.size >= CACHE_MAX) this.#sandboxes.delete(this.#sandboxes.keys().next().value!);
    this.#sandboxes.set(id, { nodeId: found, mark: before.get(found)?.movedOutAt ?? null });
    return this.node(found);
  }

  async ofSnapshot(id: string): Promise<NodeRecord | undefined> {
    const nodeId = await this.#store.snapshotNode(id);
    return nodeId ? this.node(nodeId) : undefined;
  }

  async ofBuild(id: string): Promise<NodeRecord | undefined> {
    const nodeId = await this.#store.buildNode(id);
    return nodeId ? this.node(nodeId) : undefined;
  }

  async node(id: string): Promise<NodeRecord | undefined> {
    return (await this.#list()).get(id);
  }

  async #list(): Promise<Map<string, NodeRecord>> {
    const now = Date.now();
    if (!this.#nodes || now - this.#nodes.at > NODES_TTL_MS) {
      this.#loading ??= this.#store
        .list()
        .then((list) => new Map(list.map((n) => [n.id, n])))
        .finally(() => (this.#loading = undefined));
      this.#nodes = { at: now, byId: await this.#loading };
    }
    return this.#nodes.byId;
  }

  /** Forgets where a sandbox was (this replica just moved it). */
  forget(id: string): void {
    this.#sandboxes.delete(id);
  }

  /** A request for a sandbox on a node that is not live is answered from the store. */
  isLive(n: NodeRecord): boolean {
    return isNodeLive(n, Date.now(), this.#lostMs);
  }

  headers(n: NodeRecord): Record<string, string> {
    return { [INTERNAL_HEADER]: this.#tokens.for(nodeAudience(n.id)) };
  }

  /** A POST on a node's internal API; rejects unless it answers 2xx, with the node's error as it answered it when it sent the envelope. */
  async post(n: NodeRecord, path: string, body: unknown, timeoutMs: number): Promise<void> {
    const res = await this.channel.fetch(new URL(path, n.url), {
      method: 'POST',
      headers: { ...this.headers(n), 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const answer = (await res.json().catch(() => undefined)) as { error?: { code?: string; message?: string } } | undefined;
    if (res.ok) return;
    // The node's own answer (a 409 for a sandbox that cannot move) is the caller's, as the node put it.
    const code = answer?.error?.code;
    if (code !== undefined && isErrorCode(code) && answer?.error?.message) throw new ApiError(res.status, code, answer.error.message);
    throw new Error(`node ${n.id} answered ${res.status} to ${path}`);
  }

  /** A JSON call on a node's internal API. */
  async call<T>(n: NodeRecord, path: string): Promise<T> {
    const res = await this.channel.fetch(new URL(path, n.url), { headers: this.headers(n), signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`node ${n.id} answered ${res.status} to ${path}`);
    return (await res.json()) as T;
  }
}
