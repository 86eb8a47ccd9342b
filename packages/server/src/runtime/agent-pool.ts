import { AgentClient } from './agent-client.ts';
import type { RuntimeDriver } from './driver.ts';
import { inSpan } from '../tracing.ts';

/** One multiplexed agent connection per sandbox, opened on demand and re-opened after a drop. */
export class AgentPool {
  readonly driver: RuntimeDriver;
  readonly #clients = new Map<string, Promise<AgentClient>>();

  constructor(driver: RuntimeDriver) {
    this.driver = driver;
  }

  /** The sandbox's pooled connection, opened on first use. */
  get(id: string, timeoutMs = 5000): Promise<AgentClient> {
    const cached = this.#clients.get(id);
    if (cached) return cached;
    // First contact with the sandbox's agent (a span when traced).
    const p = inSpan('agent.connect', () =>
      this.driver.connectAgent ? this.driver.connectAgent(id, timeoutMs).then((socket) => AgentClient.attach(socket, { timeoutMs })) : AgentClient.connect(this.driver.agentSocket(id), { timeoutMs }),
    );
    this.#clients.set(id, p);
    p.then(
      (c) => c.on('close', () => this.#clients.get(id) === p && this.#clients.delete(id)),
      () => this.#clients.get(id) === p && this.#clients.delete(id),
    );
    return p;
  }

  /**
   * A connection of its own, not pooled (a transfer that should not queue behind other traffic):
   * dialed to a listening agent, or asked of an agent that dials the host, through the pooled one.
   */
  async dedicated(id: string, timeoutMs = 5000): Promise<AgentClient> {
    if (!this.driver.connectAgent) return AgentClient.connect(this.driver.agentSocket(id), { timeoutMs });
    const shared = await this.get(id, timeoutMs);
    const next = this.driver.connectAgent(id, timeoutMs);
    await shared.dial();
    return AgentClient.attach(await next);
  }

  /** Closes the connection, e.g. before a checkpoint or after delete. */
  drop(id: string): void {
    const p = this.#clients.get(id);
    this.#clients.delete(id);
    p?.then(
      (c) => c.close(),
      () => undefined,
    );
  }

  closeAll(): void {
    for (const id of [...this.#clients.keys()]) this.drop(id);
  }
}
