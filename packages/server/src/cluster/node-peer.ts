import { randomUUID } from 'node:crypto';
import { unavailable } from '../errors.ts';
import { INTERNAL_HEADER, nodeAudience, type TokenCache } from '../internal-token.ts';
import { encodeSelection, fetchTree, stillMissing, type TreeFile } from '../runtime/tree-transfer.ts';
import { isNodeLive } from '../services/fleet/nodes.ts';
import type { NodeRecord, NodeStore } from '../store/nodes.ts';
import type { ChannelResponse, InternalChannel } from './internal-channel.ts';

/** Times a copy cut short is resumed before the fetch fails. */
const RESUMES = 2;

/** Bytes that arrived but are not those sent: never resumed (what is on disk cannot be trusted). */
class DigestMismatch extends Error {}

/** One node's calls to another over the internal channel, signed for the node called. */
export class NodePeers {
  readonly #nodes: NodeStore;
  readonly #tokens: TokenCache;
  readonly #lostMs: number;
  readonly #channel: InternalChannel;
  /** Where fetches place their FIFO (transferScratch). */
  readonly #scratch: string;

  constructor(nodes: NodeStore, tokens: TokenCache, lostMs: number, channel: InternalChannel, scratch: string) {
    this.#channel = channel;
    this.#scratch = scratch;
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
  async call(n: NodeRecord, path: string, init: { method?: string; body?: unknown; timeoutMs?: number } = {}): Promise<ChannelResponse> {
    const res = await this.#channel.fetch(new URL(path, n.url), {
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

  /**
   * Fetches the tar part at `path` of node `n` into directory `dest` (curl straight into tar), its bytes
   * checked on the way: over TLS by the channel (every record authenticated), on a plain channel by
   * the digest of the bytes received against the one `n` took of the bytes it sent. A copy cut short
   * (the connection, or `n` restarting) is resumed up to RESUMES times: `n` sends what `dest` still
   * lacks of `files` (its manifest), each attempt's bytes checked on their own.
   */
  async fetchPart(n: NodeRecord, path: string, dest: string, files: TreeFile[]): Promise<void> {
    let select: boolean[] | undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#fetchOnce(n, path, dest, select);
        return;
      } catch (err) {
        if (attempt === RESUMES || err instanceof DigestMismatch) throw err;
        select = await stillMissing(dest, files);
        // The node may be restarting: it is asked again once it is live.
        n = await this.live(n.id, 'the sender of a copy that was cut');
      }
    }
  }

  /** Fetches the tar at `path` of node `n` into `dest` once, checked as fetchPart's: for trees that change while sent (a running sandbox's layer), which no manifest can resume. */
  async fetchOnce(n: NodeRecord, path: string, dest: string): Promise<void> {
    await this.#fetchOnce(n, path, dest, undefined);
  }

  async #fetchOnce(n: NodeRecord, path: string, dest: string, select: boolean[] | undefined): Promise<void> {
    const transfer = randomUUID();
    const target = this.#channel.curlTarget(new URL(`${path}?transfer=${transfer}`, n.url), n.id);
    const body = select && { select: encodeSelection(select), files: select.length };
    const digest = !this.#channel.secure;
    const got = await fetchTree(target.url, { [INTERNAL_HEADER]: this.#tokens.for(nodeAudience(n.id)) }, dest, { digest, scratch: this.#scratch, config: target.config, body });
    if (!digest) return;
    const sent = (await this.json<{ digest: string }>(n, `${path}/digest?transfer=${transfer}`)).digest;
    if (sent !== got) throw new DigestMismatch(`the copy of ${path} from node '${n.id}' differs from what it sent (BLAKE2b)`);
  }
}
