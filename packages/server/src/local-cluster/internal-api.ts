import { InternalChannel } from '../cluster/internal-channel.ts';
import { API_AUDIENCE, signInternalToken } from '../internal-token.ts';

/** A node as an API replica sees it (`GET /internal/nodes`). */
export interface NodeView {
  id: string;
  region: string;
  url: string;
  state: 'ready' | 'cordoned' | 'draining' | 'lost';
  vcpus: number;
  memory_mib: number;
  max_sandboxes: number;
  labels: Record<string, string>;
  engines: string[];
  disk_mib: number;
  templates: number;
  heartbeat_at: string;
  sandboxes: number;
  allocated_vcpus: number;
  allocated_memory_mib: number;
  /** With `nodes(url, { sandboxes: true })`: its live sandboxes. */
  sandbox_list?: { id: string; status: string }[];
}

export type NodeAction = 'cordon' | 'uncordon' | 'drain';

export interface DrainResult {
  moved: { id: string; to: string }[];
  left: number;
  failed: { id: string; message: string }[];
}

const TOKEN_TTL_MS = 60_000;
const DRAIN_TIMEOUT_MS = 60 * 60_000;
const TIMEOUT_MS = 5_000;

/** The operator's side of the internal channel of API replicas: tokens signed with the cluster key, over the operator's mutual TLS when the cluster has it. */
export class InternalApi {
  readonly #key: Buffer;
  readonly #channel: InternalChannel;

  /** The cluster key: as `up` made it (hex), or as a process's settings read it. */
  constructor(clusterKey: string | Buffer, channel = InternalChannel.plain()) {
    this.#key = typeof clusterKey === 'string' ? Buffer.from(clusterKey, 'hex') : clusterKey;
    this.#channel = channel;
  }

  close(): void {
    this.#channel.close();
  }

  async #call(url: string, method: 'GET' | 'POST', timeoutMs = TIMEOUT_MS): Promise<unknown> {
    const res = await this.#channel.fetch(url, {
      method,
      headers: { authorization: `Bearer ${signInternalToken(this.#key, API_AUDIENCE, TOKEN_TTL_MS)}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${body?.error?.message ?? ''}`.trim());
    return body;
  }

  async nodes(apiUrl: string, opts: { sandboxes?: boolean } = {}): Promise<NodeView[]> {
    return ((await this.#call(`${apiUrl}/internal/nodes${opts.sandboxes ? '?sandboxes=true' : ''}`, 'GET')) as { nodes: NodeView[] }).nodes;
  }

  /** A drain answers what it moved and what it left (it copies paused sandboxes, so it may take minutes). */
  async act(apiUrl: string, nodeId: string, action: NodeAction): Promise<DrainResult | undefined> {
    const body = await this.#call(`${apiUrl}/internal/nodes/${encodeURIComponent(nodeId)}/${action}`, 'POST', action === 'drain' ? DRAIN_TIMEOUT_MS : TIMEOUT_MS);
    return action === 'drain' ? (body as DrainResult) : undefined;
  }

  /** `act` through the first of `apiUrls` that takes it (a replica may be down or restarting). */
  async actOnAny(apiUrls: string[], nodeId: string, action: NodeAction): Promise<DrainResult | undefined> {
    let last: unknown = new Error('no API replica URL given');
    for (const url of apiUrls) {
      try {
        return await this.act(url, nodeId, action);
      } catch (err) {
        last = err;
      }
    }
    throw new Error(`no API replica took the ${action}: ${(last as Error).message}`);
  }
}

/** Whether `GET /info` answers (an API replica is up). */
export async function answersInfo(apiUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${apiUrl}/info`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}
