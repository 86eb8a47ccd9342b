import type { Logger } from 'pino';
import { ApiError, unavailable } from '../errors.ts';
import type { SnapshotEngine, SnapshotManifest, TemplateFiles } from '../runtime/driver.ts';
import type { NodePeers } from './node-peer.ts';

export interface SnapshotShippingDeps {
  engine: SnapshotEngine;
  peers: NodePeers;
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
    const { engine, peers, log } = this.#deps;
    const transfer = engine.transfer;
    if (!transfer) throw unavailable('this node cannot receive snapshots from other nodes');
    const holder = await peers.live(snapshot.nodeId, `which holds snapshot ${snapshot.id} (its files cannot be shipped to another node while it is away)`);
    const started = Date.now();
    const path = `/internal/snapshots/${snapshot.id}`;
    let manifest: SnapshotManifest;
    try {
      manifest = await peers.json<SnapshotManifest>(holder, `${path}/manifest`, { timeoutMs: MANIFEST_TIMEOUT_MS });
      await transfer.receive(
        snapshot.id,
        manifest,
        (part) => peers.stream(holder, `${path}/parts/${part}`),
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
}
