import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { unavailable } from '../errors.ts';
import type { LayerIdentity, RemoteLayers } from '../services/data-plane/changes.ts';
import type { SandboxRecord } from '../store/sandboxes.ts';
import type { NodePeers } from './node-peer.ts';

/** A node's reach into the layers of sandboxes on other nodes (an apply of changes between nodes). */
export class PeerLayers implements RemoteLayers {
  readonly #peers: NodePeers;
  readonly #nodeId: string;
  readonly #dir: string;

  private constructor(peers: NodePeers, nodeId: string, dir: string) {
    this.#peers = peers;
    this.#nodeId = nodeId;
    this.#dir = dir;
  }

  /** `dir`: where fetched layers are unpacked (on this node's data disk), each in its own directory, removed after use; what a crash left there goes first. */
  static async open(peers: NodePeers, nodeId: string, dir: string): Promise<PeerLayers> {
    await rm(dir, { recursive: true, force: true });
    return new PeerLayers(peers, nodeId, dir);
  }

  elsewhere(rec: SandboxRecord): boolean {
    return !!rec.nodeId && rec.nodeId !== this.#nodeId;
  }

  async fetch(rec: SandboxRecord): Promise<{ upper: string; base: LayerIdentity; dispose: () => Promise<void> }> {
    const n = await this.#peers.live(rec.nodeId!, 'the node holding the sandbox the changes come from');
    const path = `/internal/sandboxes/${rec.id}/layer`;
    await mkdir(this.#dir, { recursive: true });
    const upper = await mkdtemp(join(this.#dir, 'apply-'));
    const dispose = () => rm(upper, { recursive: true, force: true });
    try {
      const base = await this.#peers.json<LayerIdentity>(n, path, { timeoutMs: 10_000 });
      await this.#peers.fetchOnce(n, `${path}/upper`, upper);
      return { upper, base, dispose };
    } catch (err) {
      await dispose();
      throw unavailable(`the changes of sandbox ${rec.id} could not be read from node '${n.id}': ${(err as Error).message}`);
    }
  }
}
