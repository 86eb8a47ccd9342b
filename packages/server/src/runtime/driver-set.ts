import type { Socket } from 'node:net';
import { dialUnix } from './agent-client.ts';
import type { EngineHealth } from './engine-health.ts';
import type { DriverName, EngineState, EngineStats, RuntimeDriver, SandboxSpec, SnapshotEngine, SandboxMoves, WritableLayer } from './driver.ts';

/**
 * Several engines behind one driver: new sandboxes go to the primary, every other
 * call goes to the engine that holds the sandbox. A host that changes its default
 * driver (or whose gvisor probe fails once at start) keeps managing the sandboxes
 * the other engine still runs instead of losing them.
 */
export class DriverSet implements RuntimeDriver {
  readonly primary: RuntimeDriver;
  readonly #all: RuntimeDriver[];
  readonly #owner = new Map<string, RuntimeDriver>();

  private constructor(primary: RuntimeDriver, others: RuntimeDriver[]) {
    this.primary = primary;
    this.#all = [primary, ...others];
  }

  static async of(primary: RuntimeDriver, others: RuntimeDriver[]): Promise<DriverSet> {
    const set = new DriverSet(primary, others);
    for (const d of others) for (const id of await d.list()) set.#owner.set(id, d);
    return set;
  }

  get name(): DriverName {
    return this.primary.name;
  }

  get pauseKeeps(): 'ram' | 'disk' {
    return this.primary.pauseKeeps;
  }

  get snapshots(): SnapshotEngine | undefined {
    return this.primary.snapshots;
  }

  get moves(): SandboxMoves | undefined {
    return this.primary.moves;
  }

  /** The primary's: it makes every pre-started sandbox. */
  get attachVolumes(): RuntimeDriver['attachVolumes'] {
    const attach = this.primary.attachVolumes;
    return attach && ((id, mounts) => attach.call(this.primary, id, mounts));
  }

  /** Engine names whose sandboxes this set manages (reconciliation covers all of them). */
  serves(name: string): boolean {
    return this.#all.some((d) => d.name === name);
  }

  #for(id: string): RuntimeDriver {
    return this.#owner.get(id) ?? this.primary;
  }

  create(spec: SandboxSpec): Promise<void> {
    return this.primary.create(spec);
  }
  pause(id: string): Promise<void> {
    return this.#for(id).pause(id);
  }
  stop(id: string): Promise<void> {
    const d = this.#for(id);
    if (!d.stop) throw new Error(`the ${d.name} engine cannot pause a sandbox without its memory`);
    return d.stop(id);
  }
  dropMemory(id: string): Promise<void> {
    const d = this.#for(id);
    if (!d.dropMemory) throw new Error(`the ${d.name} engine cannot boot a paused sandbox from its disk`);
    return d.dropMemory(id);
  }
  resume(id: string): Promise<void> {
    return this.#for(id).resume(id);
  }
  async destroy(id: string): Promise<void> {
    await this.#for(id).destroy(id);
    this.#owner.delete(id);
  }
  state(id: string): Promise<EngineState> {
    return this.#for(id).state(id);
  }
  async templatePaths(): Promise<string[]> {
    const each = await Promise.all(this.#all.map((d) => (d.templatePaths ? d.templatePaths() : Promise.reject(new Error(`the ${d.name} engine cannot tell which template files it uses`)))));
    return each.flat();
  }

  async list(): Promise<string[]> {
    return (await Promise.all(this.#all.map((d) => d.list()))).flat();
  }
  stats(id: string): Promise<EngineStats> {
    return this.#for(id).stats(id);
  }
  async health(id: string): Promise<EngineHealth> {
    const d = this.#for(id);
    return d.health ? d.health(id) : 'unknown';
  }
  async writableLayer(id: string): Promise<WritableLayer | undefined> {
    const d = this.#for(id);
    return d.writableLayer ? d.writableLayer(id) : undefined;
  }
  agentSocket(id: string): string {
    return this.#for(id).agentSocket(id);
  }
  upperDir(id: string): string {
    return this.#for(id).upperDir(id);
  }
  /** Only engines whose agent dials the host have this; for the others the caller dials agentSocket. */
  get connectAgent(): ((id: string, timeoutMs: number) => Promise<Socket>) | undefined {
    if (!this.#all.some((d) => d.connectAgent)) return undefined;
    return (id, timeoutMs) => {
      const d = this.#for(id);
      if (d.connectAgent) return d.connectAgent(id, timeoutMs);
      return dialUnix(d.agentSocket(id), timeoutMs);
    };
  }
  async close(opts?: { release?: boolean }): Promise<void> {
    for (const d of this.#all) await d.close(opts);
  }
}
