import { unavailable } from '../errors.ts';
import type { DriverName, EngineState, EngineStats, RuntimeDriver, SnapshotEngine } from '../runtime/driver.ts';
import type { NodeDirectory } from './node-client.ts';

const noEngine = () => unavailable('this API replica runs no sandboxes, and the node holding this one is not reachable');

/**
 * The engine seen from an API replica (`SANDPIT_ROLE=api`). Requests about a sandbox go to its node
 * before any service runs, so the services here reach this only for sandboxes whose node is lost
 * (they are failed: removing them leaves the node to destroy them when it returns, since the store's
 * deletes win), and for metering's disk sizes, which it asks the node for.
 */
export class ApiRoleDriver implements RuntimeDriver {
  readonly name: DriverName;
  readonly pauseKeeps = 'disk' as const;
  readonly #nodes: NodeDirectory;
  readonly snapshots: SnapshotEngine;

  constructor(name: DriverName, nodes: NodeDirectory) {
    this.name = name;
    this.#nodes = nodes;
    this.snapshots = {
      capture: async () => Promise.reject(noEngine()),
      createFrom: async () => Promise.reject(noEngine()),
      inspect: async () => undefined,
      delete: async () => undefined,
      list: async () => [],
    };
  }

  async create(): Promise<void> {
    throw noEngine();
  }
  async pause(): Promise<void> {
    throw noEngine();
  }
  async resume(): Promise<void> {
    throw noEngine();
  }
  async destroy(): Promise<void> {}
  async state(): Promise<EngineState> {
    return 'missing';
  }
  async list(): Promise<string[]> {
    return [];
  }
  async stats(id: string): Promise<EngineStats> {
    const node = await this.#nodes.ofSandbox(id);
    if (!node || !this.#nodes.isLive(node)) throw noEngine();
    return this.#nodes.call<EngineStats>(node, `/internal/engine/${id}/stats`);
  }
  agentSocket(): string {
    throw noEngine();
  }
  upperDir(): string {
    throw noEngine();
  }
  /** It holds no sandbox's engine, so nothing is ever reconciled against it. */
  serves(): boolean {
    return false;
  }
  /** The channel to nodes is the platform's, closed with it. */
  async close(): Promise<void> {}
}
