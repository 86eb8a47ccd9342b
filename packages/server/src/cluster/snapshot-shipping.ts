import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Logger } from 'pino';
import { ApiError, unavailable } from '../errors.ts';
import { INTERNAL_HEADER, nodeAudience, type TokenCache } from '../internal-token.ts';
import type { SnapshotEngine, SnapshotManifest, TemplateFiles } from '../runtime/driver.ts';
import { isNodeLive } from '../services/nodes.ts';
import type { NodeRecord, NodeStore } from '../store/nodes.ts';

export interface SnapshotShippingDeps {
  engine: SnapshotEngine;
  nodes: NodeStore;
  tokens: TokenCache;
  lostMs: number;
  /** This node's paths of a snapshot's template files (rebuilt from the recipe when they are not here). */
  relocate: (templateId: string | null, t: TemplateFiles) => Promise<TemplateFiles>;
  log: Logger;
}

/** How long the holder may take to list and checksum a snapshot's files. */
const MANIFEST_TIMEOUT_MS = 60_000;

/**
 * A node's copies of snapshots another node holds: a fork placed here fetches the snapshot's files
 * from its holder over the internal channel (signed for the holder), streamed, checked against the
 * holder's manifest and kept, so the next fork of it here starts at once. One fetch per snapshot at a time.
 */
export class SnapshotShipping {
  readonly #deps: SnapshotShippingDeps;
  readonly #fetching = new Map<string, Promise<void>>();

  constructor(deps: SnapshotShippingDeps) {
    this.#deps = deps;
  }

  /** Resolves once this node has the snapshot's files; 503 when its holder is lost or the copy fails. */
  async ensure(snapshot: { id: string; nodeId: string; templateId: string | null }): Promise<void> {
    if (await this.#deps.engine.inspect(snapshot.id)) return;
    let p = this.#fetching.get(snapshot.id);
    if (!p) {
      p = this.#ship(snapshot).finally(() => this.#fetching.delete(snapshot.id));
      this.#fetching.set(snapshot.id, p);
    }
    return p;
  }

  async #ship(snapshot: { id: string; nodeId: string; templateId: string | null }): Promise<void> {
    const { engine, nodes, lostMs, log } = this.#deps;
    const transfer = engine.transfer;
    if (!transfer) throw unavailable('this node cannot receive snapshots from other nodes');
    const holder = await nodes.get(snapshot.nodeId);
    if (!holder || !isNodeLive(holder, Date.now(), lostMs)) {
      throw unavailable(`node '${snapshot.nodeId}', which holds snapshot ${snapshot.id}, is lost or not reachable, so its files cannot be shipped to another node; retry when it is back`);
    }
    const started = Date.now();
    let manifest: SnapshotManifest;
    try {
      manifest = (await (await this.#get(holder, `/internal/snapshots/${snapshot.id}/manifest`, AbortSignal.timeout(MANIFEST_TIMEOUT_MS))).json()) as SnapshotManifest;
      await transfer.receive(
        snapshot.id,
        manifest,
        async (part) => {
          const res = await this.#get(holder, `/internal/snapshots/${snapshot.id}/parts/${part}`);
          return Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
        },
        (t) => this.#deps.relocate(snapshot.templateId, t),
      );
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw unavailable(`shipping snapshot ${snapshot.id} from node '${holder.id}' failed: ${(err as Error).message}`);
    }
    const bytes = Object.values(manifest)
      .flat()
      .reduce((n, f) => n + f.size, 0);
    log.info({ snapshot: snapshot.id, from: holder.id, bytes, ms: Date.now() - started }, 'snapshot shipped here from its holder');
  }

  async #get(holder: NodeRecord, path: string, signal?: AbortSignal): Promise<Response> {
    const res = await fetch(new URL(path, holder.url), { headers: { [INTERNAL_HEADER]: this.#deps.tokens.for(nodeAudience(holder.id)) }, signal });
    if (!res.ok || !res.body) throw new Error(`node '${holder.id}' answered ${res.status} to ${path}`);
    return res;
  }
}
