import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { unavailable } from '../errors.ts';
import { INTERNAL_HEADER, nodeAudience, type TokenCache } from '../internal-token.ts';
import { isNodeLive } from '../services/fleet/nodes.ts';
import type { NodeRecord, NodeStore } from '../store/nodes.ts';

/** One node's calls to another over the internal channel, signed for the node called. */
export class NodePeers {
  readonly #nodes: NodeStore;
  readonly #tokens: TokenCache;
  readonly #lostMs: number;

  constructor(nodes: NodeStore, tokens: TokenCache, lostMs: number) {
    this.#nodes = nodes;
    this.#tokens = tokens;
    this.#lostMs = lostMs;
  }

  /** The node, when it is live; else 503 naming `role` (what it is to the caller). */
  async live(id: string, role: string): Promise<NodeRecord> {
    const n = await this.#nodes.get(id);
    if (!n || !isNodeLive(n, Date.now(), this.#lostMs)) throw unavailable(`node '${id}', ${role}, is lost or not reachable; retry when it is back`);
    return n;
  }

  /** A request to `n`; rejects unless it answers 2xx (with its error message when it gives one). */
  async call(n: NodeRecord, path: string, init: { method?: string; body?: unknown; timeoutMs?: number } = {}): Promise<Response> {
    const res = await fetch(new URL(path, n.url), {
      method: init.method ?? 'GET',
      headers: { [INTERNAL_HEADER]: this.#tokens.for(nodeAudience(n.id)), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: init.timeoutMs ? AbortSignal.timeout(init.timeoutMs) : undefined,
    });
    if (!res.ok) {
      const msg = ((await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined)?.error?.message;
      throw new Error(`node '${n.id}' answered ${res.status} to ${path}${msg ? `: ${msg}` : ''}`);
    }
    return res;
  }

  async json<T>(n: NodeRecord, path: string, init?: { method?: string; body?: unknown; timeoutMs?: number }): Promise<T> {
    return (await (await this.call(n, path, init)).json()) as T;
  }

  /** A streamed body from `n` (a tar part), read as it arrives. */
  async stream(n: NodeRecord, path: string): Promise<Readable> {
    const res = await this.call(n, path);
    if (!res.body) throw new Error(`node '${n.id}' sent no body for ${path}`);
    return Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
  }
}
