import { ApiError, conflict, notFound, unavailable } from '../errors.ts';
import type { NodeService } from '../services/fleet/nodes.ts';
import type { Placement } from '../services/fleet/placement.ts';
import type { SandboxRecord } from '../store/sandboxes.ts';
import type { VolumeStore } from '../store/volumes.ts';
import type { NodeDirectory } from './node-client.ts';
import { MOVE_TIMEOUT_MS } from './sandbox-mover.ts';

export interface SandboxRelocationDeps {
  nodes: NodeService;
  placement: Placement;
  directory: NodeDirectory;
  /** A sandbox that mounts volumes stays with them on their node. */
  volumes: VolumeStore;
}

/**
 * An API replica's part of moving one sandbox off its node (a drain, a migrate): everything that can
 * refuse is checked before the source stops anything (the target's room is held by placement while
 * the copy runs), then the source node does the move (SandboxMover) and answers how it went.
 */
export class SandboxRelocation {
  readonly #d: SandboxRelocationDeps;

  constructor(deps: SandboxRelocationDeps) {
    this.#d = deps;
  }

  /** Moves `rec` to node `to`, or to one placement picks; answers the node it is on now. */
  async move(rec: SandboxRecord, to?: string): Promise<string> {
    const d = this.#d;
    if (rec.status !== 'active' && rec.status !== 'paused') throw conflict(`the sandbox is ${rec.status}; only a running or paused sandbox moves`);
    const source = rec.nodeId ? await d.nodes.get(rec.nodeId) : undefined;
    if (!source || !d.nodes.isLive(source)) throw unavailable(`node '${rec.nodeId}' is not live: its sandboxes cannot be copied off it`);
    if (to !== undefined) {
      const target = await d.nodes.get(to);
      if (!target) throw notFound(`no node '${to.slice(0, 128)}'`);
      if (to === source.id) throw conflict(`the sandbox is on node '${to}' already`);
      if (target.region !== source.region) throw conflict(`node '${to}' is in region '${target.region}'; sandboxes move within their region ('${source.region}')`);
    }
    if ((await d.volumes.mountsOf([rec.id])).length > 0) throw conflict(`it mounts volumes, which live on node '${source.id}' and are not moved: it stays there`);
    const chosen = await d.placement.choose({
      region: source.region,
      vcpus: rec.resources.vcpu_count,
      memoryMib: rec.resources.memory_mib,
      exclude: source.id,
      ...(to === undefined ? {} : { node: to, nodeRole: 'the move target' }),
    });
    try {
      await d.directory.post(source, `/internal/sandboxes/${rec.id}/move`, { to: chosen.node.id }, MOVE_TIMEOUT_MS);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      // The source went away mid-move: the store says where the sandbox is (its restart settles it there, paused or running).
      throw unavailable(`node '${source.id}' did not finish the move (${(err as Error).message}); GET the sandbox to see where it is`);
    } finally {
      chosen.release();
      // Whatever happened, where it lives is read again from the store.
      d.directory.forget(rec.id);
    }
    return chosen.node.id;
  }
}
