import type { Logger } from 'pino';
import { ApiError, unavailable } from '../errors.ts';
import type { SnapshotEngine, SnapshotManifest, TemplateFiles } from '../runtime/driver.ts';
import { snapshotCopyKey } from '../schemas/node.ts';
import type { NodePeers } from './node-peer.ts';

export interface SnapshotShippingDeps {
  engine: SnapshotEngine;
  peers: NodePeers;
  /** This node's paths of a snapshot's template files (rebuilt from the recipe when they are not here). */
  relocate: (templateId: string | null, t: TemplateFiles) => Promise<TemplateFiles>;
  /** The live snapshot row (any node's); undefined once deleted. */
  snapshot: (id: string) => Promise<{ nodeId?: string | null } | undefined>;
  /** Counts a copy kept here in the snapshot's size. */
  counted: (id: string, bytes: number) => Promise<void>;
  nodeId: string;
  log: Logger;
}

/** How often copies of deleted snapshots are looked for. */
const SWEEP_MS = 60_000;

/** How long the holder may take to list a snapshot's files. */
const MANIFEST_TIMEOUT_MS = 60_000;

/**
 * A node's copies of snapshots another node holds: a fork placed here fetches the snapshot's files
 * from its holder over the internal channel (signed for the holder), streamed, checked against the
 * holder's manifest and digest and kept (its bytes counted in the snapshot's size_bytes), so the next fork
 * of it here starts at once. One fetch per snapshot at a time.
 */
export class SnapshotShipping {
  readonly #deps: SnapshotShippingDeps;
  readonly #fetching = new Map<string, Promise<void>>();
  /** Snapshots of other nodes this node holds a copy of: each goes when its snapshot is deleted. */
  readonly #copies = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;

  constructor(deps: SnapshotShippingDeps) {
    this.#deps = deps;
  }

  /** Finds the copies already on disk (kept across a restart), then sweeps them every so often. */
  async start(): Promise<void> {
    for (const id of await this.#deps.engine.list()) {
      const row = await this.#deps.snapshot(id);
      if (row?.nodeId && row.nodeId !== this.#deps.nodeId) this.#copies.add(id);
    }
    this.#timer = setInterval(() => {
      this.#sweeping ??= this.sweep().finally(() => (this.#sweeping = undefined));
    }, SWEEP_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sweeping;
  }

  /** The copies held here, as the keys placement prefers a fork's node by (reported in heartbeats). */
  held(): string[] {
    return [...this.#copies].map(snapshotCopyKey);
  }

  /** Deletes the copies whose snapshot was deleted (the holder deletes only its own files). */
  async sweep(): Promise<void> {
    const { engine, log } = this.#deps;
    for (const id of this.#copies) {
      if (this.#fetching.has(id)) continue;
      const row = await this.#deps.snapshot(id).catch(() => ({}));
      if (row) continue;
      await engine.delete(id).then(
        () => this.#copies.delete(id),
        (err: Error) => log.warn({ snapshot: id, err: err.message }, 'removing the copy of a deleted snapshot failed'),
      );
    }
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
        (part, dest, files) => peers.fetchPart(holder, `${path}/parts/${part}`, dest, files),
        (t) => this.#deps.relocate(snapshot.templateId, t),
      );
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw unavailable(`shipping snapshot ${snapshot.id} from node '${holder.id}' failed: ${(err as Error).message}`);
    }
    this.#copies.add(snapshot.id);
    const bytes = Object.values(manifest)
      .flat()
      .reduce((n, f) => n + f.size, 0);
    await this.#deps.counted(snapshot.id, bytes).catch((err: Error) => log.warn({ snapshot: snapshot.id, err: err.message }, 'counting the copy in the snapshot size failed'));
    log.info({ snapshot: snapshot.id, from: holder.id, bytes, ms: Date.now() - started }, 'snapshot shipped here from its holder');
  }
}
