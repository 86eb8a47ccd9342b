/** What GET /readyz reports: each check that must pass before this process takes traffic. */
export interface ReadinessReport {
  ready: boolean;
  checks: { store: string; registered?: string };
}

/**
 * Whether this process can serve: the store answers, and a node has been accepted by an API
 * replica (its last heartbeat went through), so placement can reach it.
 */
export class Readiness {
  readonly #ping: () => Promise<void>;
  readonly #isNode: boolean;
  #registered: (() => boolean) | undefined;

  constructor(ping: () => Promise<void>, isNode: boolean) {
    this.#ping = ping;
    this.#isNode = isNode;
  }

  /** Set once the node's heartbeat agent exists; until then a node is not registered. */
  registeredBy(source: () => boolean): void {
    this.#registered = source;
  }

  async check(): Promise<ReadinessReport> {
    const store = await this.#ping().then(
      () => 'ok',
      () => 'not reachable',
    );
    if (!this.#isNode) return { ready: store === 'ok', checks: { store } };
    const registered = this.#registered?.() ? 'ok' : 'no API replica has accepted a heartbeat';
    return { ready: store === 'ok' && registered === 'ok', checks: { store, registered } };
  }
}
