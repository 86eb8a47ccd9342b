import type { Socket } from 'node:net';
import type { EngineState, EngineStats, RuntimeDriver, SandboxSpec } from '../../src/runtime/driver.ts';

type Op = 'create' | 'pause' | 'resume' | 'destroy';

/**
 * An engine that keeps sandboxes as entries in a map: no processes, no agent (a connection to it
 * fails at once, so commands answer 503). For unit tests of the rules above the engine, in milliseconds.
 */
export class MemoryDriver implements RuntimeDriver {
  readonly name = 'container';
  readonly pauseKeeps = 'ram';
  readonly sandboxes = new Map<string, { state: 'running' | 'paused'; spec: SandboxSpec }>();
  stats_: EngineStats = { memoryBytes: 64 << 20, cpuUsageNs: 0, diskBytes: 1 << 20 };
  readonly #failures = new Map<Op, { err: Error; then: EngineState }>();

  /** The next `op` throws `err`, leaving the sandbox in state `then` ('missing': gone). */
  failNext(op: Op, err: Error, then: EngineState): void {
    this.#failures.set(op, { err, then });
  }

  #fail(op: Op, id: string): void {
    const f = this.#failures.get(op);
    if (!f) return;
    this.#failures.delete(op);
    const sb = this.sandboxes.get(id);
    if (f.then === 'missing' || f.then === 'stopped') this.sandboxes.delete(id);
    else if (sb) sb.state = f.then;
    throw f.err;
  }

  async create(spec: SandboxSpec): Promise<void> {
    if (this.sandboxes.has(spec.id)) throw new Error(`sandbox ${spec.id} exists`);
    this.sandboxes.set(spec.id, { state: 'running', spec });
    this.#fail('create', spec.id);
  }

  async pause(id: string): Promise<void> {
    const sb = this.#get(id);
    this.#fail('pause', id);
    if (sb.state !== 'running') throw new Error(`sandbox ${id} is ${sb.state}`);
    sb.state = 'paused';
  }

  async resume(id: string): Promise<void> {
    const sb = this.#get(id);
    this.#fail('resume', id);
    if (sb.state !== 'paused') throw new Error(`sandbox ${id} is ${sb.state}`);
    sb.state = 'running';
  }

  async destroy(id: string): Promise<void> {
    this.#fail('destroy', id);
    this.sandboxes.delete(id);
  }

  async state(id: string): Promise<EngineState> {
    return this.sandboxes.get(id)?.state ?? 'missing';
  }

  async list(): Promise<string[]> {
    return [...this.sandboxes.keys()];
  }

  async stats(id: string): Promise<EngineStats> {
    this.#get(id);
    return { ...this.stats_ };
  }

  agentSocket(id: string): string {
    return `/nonexistent/sandpit-memory-driver/${id}.sock`;
  }

  async connectAgent(id: string): Promise<Socket> {
    throw Object.assign(new Error(`sandbox ${id} has no agent in a memory engine`), { code: 'ECONNREFUSED' });
  }

  upperDir(id: string): string {
    return `/nonexistent/sandpit-memory-driver/${id}/upper`;
  }

  async close(): Promise<void> {}

  #get(id: string) {
    const sb = this.sandboxes.get(id);
    if (!sb) throw new Error(`sandbox ${id} not found`);
    return sb;
  }
}
