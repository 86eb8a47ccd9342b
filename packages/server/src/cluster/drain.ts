import type { Logger } from 'pino';
import { taggedSandboxId } from '../ids.ts';
import type { DrainAnswer } from '../schemas/node.ts';
import type { NodeService } from '../services/fleet/nodes.ts';
import type { Placement } from '../services/fleet/placement.ts';
import type { SandboxStore } from '../store/sandboxes.ts';
import type { VolumeStore } from '../store/volumes.ts';
import type { NodeDirectory } from './node-client.ts';
import { MOVE_TIMEOUT_MS } from './sandbox-mover.ts';

export interface NodeDrainDeps {
  nodes: NodeService;
  /** Every node's rows (an API replica's store). */
  sandboxes: SandboxStore;
  placement: Placement;
  directory: NodeDirectory;
  /** A sandbox that mounts volumes stays with them on their node. */
  volumes: VolumeStore;
  log: Logger;
}

/**
 * Drains a node: it takes no new sandboxes, and each of its paused sandboxes is moved to a node that
 * placement picks (one at a time: each copy is disk- and network-bound). Running sandboxes stay (a
 * live move is not built), and so do paused ones that mount volumes (volumes do not move between
 * nodes): the answer counts them, with the moves that failed, so the operator can pause them and
 * drain again, or let them end.
 */
export class NodeDrain {
  readonly #d: NodeDrainDeps;

  constructor(deps: NodeDrainDeps) {
    this.#d = deps;
  }

  async drain(nodeId: string): Promise<DrainAnswer> {
    const d = this.#d;
    await d.nodes.setState(nodeId, 'draining');
    const node = (await d.nodes.get(nodeId))!;
    const { paused, others } = await d.sandboxes.onNode(nodeId);
    const answer: DrainAnswer = { moved: [], left: others, failed: [] };
    for (const rec of paused) {
      let release: (() => void) | undefined;
      try {
        if (!d.nodes.isLive(node)) throw new Error(`node '${nodeId}' is not live: its sandboxes cannot be copied off it`);
        if ((await d.volumes.mountsOf([rec.id])).length > 0) throw new Error(`it mounts volumes, which live on node '${nodeId}' and are not moved: it stays there`);
        const chosen = await d.placement.choose({ region: node.region, vcpus: rec.resources.vcpu_count, memoryMib: rec.resources.memory_mib, exclude: nodeId });
        release = chosen.release;
        await d.directory.post(node, `/internal/sandboxes/${rec.id}/move`, { to: chosen.node.id }, MOVE_TIMEOUT_MS);
        d.directory.forget(rec.id);
        answer.moved.push({ id: taggedSandboxId(rec.region, rec.id), to: chosen.node.id });
      } catch (err) {
        answer.failed.push({ id: taggedSandboxId(rec.region, rec.id), message: (err as Error).message });
        answer.left++;
      } finally {
        release?.();
      }
    }
    d.log.info({ node: nodeId, moved: answer.moved.length, left: answer.left, failed: answer.failed.length }, 'node drained');
    return answer;
  }
}
