import type { IncomingHttpHeaders } from 'node:http';
import { conflict, unavailable } from '../errors.ts';
import { isUuid } from '../ids.ts';
import type { CreateSandboxBody } from '../schemas/sandbox.ts';
import type { NodeRecord } from '../store/nodes.ts';
import type { VolumeRecord, VolumeStore } from '../store/volumes.ts';
import type { NodeDirectory } from './node-client.ts';

/** 503 for a volume whose node is lost: nothing is deleted, the volume and its files come back with the node. */
export function volumeNodeLost(what: string, nodeId: string) {
  return unavailable(`${what} lives on node '${nodeId}', which is lost; it comes back with that node (nothing was deleted), retry then`);
}

/**
 * Where volumes live (several hosts): each on the node that created it (`node_id`). An API replica
 * sends a volume's requests, and the creates that mount it, to that node. A volume named rather than
 * given by id is looked up in the team of the request's credentials; the node authenticates the
 * request again, so a wrong guess here only ends in the node's 404.
 */
export class VolumeHomes {
  readonly #store: VolumeStore;
  readonly #directory: NodeDirectory;
  /** The team of a request's credentials (API key or console session); undefined when they name none. */
  readonly #teamOf: (headers: IncomingHttpHeaders) => Promise<string | undefined>;

  constructor(deps: { store: VolumeStore; directory: NodeDirectory; teamOf: (headers: IncomingHttpHeaders) => Promise<string | undefined> }) {
    this.#store = deps.store;
    this.#directory = deps.directory;
    this.#teamOf = deps.teamOf;
  }

  /**
   * The node keeping the volume a request names; undefined when no volume of the caller's team has
   * that id or name (the replica answers: 404, 401). 503 while that node is lost.
   */
  async ofRequest(ref: string, headers: IncomingHttpHeaders): Promise<NodeRecord | undefined> {
    const team = isUuid(ref) ? undefined : await this.#teamOf(headers);
    const rec = isUuid(ref) ? await this.#store.get(ref.toLowerCase()) : team === undefined ? undefined : await this.#store.byName(team, ref);
    if (!rec?.nodeId) return undefined;
    const node = await this.#directory.node(rec.nodeId);
    if (!node || !this.#directory.isLive(node)) throw volumeNodeLost(`volume '${ref.slice(0, 64)}'`, rec.nodeId);
    return node;
  }

  /** Bytes the volume holds, asked of its node (an API replica's list); 0 while that node is lost or does not answer. */
  async usage(rec: VolumeRecord): Promise<number> {
    const node = rec.nodeId ? await this.#directory.node(rec.nodeId) : undefined;
    if (!node || !this.#directory.isLive(node)) return 0;
    return this.#directory
      .call<{ used_bytes: number }>(node, `/internal/volumes/${rec.id}/usage`)
      .then((r) => r.used_bytes)
      .catch(() => 0);
  }

  /**
   * The node a create must run on to mount its volumes (those it names, or for a fork those its
   * snapshot's sandbox mounted); undefined when it mounts none this store knows. 409 when they live on
   * different nodes. Unknown volumes are left to the node, which answers them as the contract says.
   */
  async ofCreate(teamId: string, body: CreateSandboxBody): Promise<string | undefined> {
    const recs: VolumeRecord[] = [];
    for (const m of body.volumes ?? []) {
      const rec = await this.#store.ofTeam(teamId, m.volume);
      if (rec) recs.push(rec);
    }
    if (body.from_snapshot !== undefined && isUuid(body.from_snapshot)) {
      const source = await this.#store.snapshotSandbox(body.from_snapshot.toLowerCase());
      for (const m of source ? await this.#store.mountsOf([source]) : []) {
        const rec = await this.#store.get(m.volumeId);
        if (rec && rec.teamId === teamId) recs.push(rec);
      }
    }
    const homes = [...new Set(recs.map((r) => r.nodeId).filter((n): n is string => n !== null))];
    if (homes.length > 1) {
      const where = recs.map((r) => `'${r.name}' on ${r.nodeId}`).join(', ');
      throw conflict(`a sandbox runs on one node, and its volumes live on different nodes (${where}); mount volumes of one node`);
    }
    return homes[0];
  }
}
