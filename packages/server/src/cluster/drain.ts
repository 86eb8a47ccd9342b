import type { Logger } from 'pino';
import { taggedSandboxId } from '../ids.ts';
import type { DrainAnswer } from '../schemas/node.ts';
import type { NodeService } from '../services/fleet/nodes.ts';
import type { SandboxStore } from '../store/sandboxes.ts';
import type { SandboxRelocation } from './sandbox-relocation.ts';

export interface NodeDrainDeps {
  nodes: NodeService;
  /** Every node's rows (an API replica's store). */
  sandboxes: SandboxStore;
  relocation: SandboxRelocation;
  log: Logger;
}

/**
 * Drains a node: it takes no new sandboxes, and each of its paused and running sandboxes is moved to a
 * node that placement picks (one at a time: each copy is disk- and network-bound; a running one is
 * checkpointed, copied and resumed there, see SandboxMover). What cannot move stays and is counted
 * with why: a sandbox of an engine whose memory is not on disk (crun), one that mounts volumes
 * (volumes do not move between nodes), one in a transition. The operator can
 * deal with those and drain again, or let them end.
 */
export class NodeDrain {
  readonly #d: NodeDrainDeps;

  constructor(deps: NodeDrainDeps) {
    this.#d = deps;
  }

  async drain(nodeId: string): Promise<DrainAnswer> {
    const d = this.#d;
    await d.nodes.setState(nodeId, 'draining');
    const { movable, others } = await d.sandboxes.onNode(nodeId);
    const answer: DrainAnswer = { moved: [], left: others, failed: [] };
    for (const rec of movable) {
      try {
        const to = await d.relocation.move(rec);
        answer.moved.push({ id: taggedSandboxId(rec.region, rec.id), to });
      } catch (err) {
        answer.failed.push({ id: taggedSandboxId(rec.region, rec.id), message: (err as Error).message });
        answer.left++;
      }
    }
    d.log.info({ node: nodeId, moved: answer.moved.length, left: answer.left, failed: answer.failed.length }, 'node drained');
    return answer;
  }
}
