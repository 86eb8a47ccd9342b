import { NotFoundError } from './errors.ts';
import { type CommandOptions, type ExecResult, type ExecTarget, runCommand, type StreamOptions, type StreamResult, streamCommand } from './exec.ts';
import type { HttpClient, RequestOptions } from './http.ts';
import type {
  ApplyChangesResult,
  CreateSandboxParams,
  SandboxChangePage,
  SandboxEvent,
  SandboxInfo,
  SandboxMetrics,
  SandboxPage,
  SandboxStatus,
  SandboxWithToken,
  UpdateSandboxParams,
} from './types.ts';

/** Options of pause, resume and activate: `keepMemory: false` keeps (or restores) only the disk. */
export interface LifecycleOptions extends RequestOptions {
  keepMemory?: boolean;
}

export interface ListSandboxesFilters {
  /** One status or several. */
  status?: SandboxStatus | SandboxStatus[];
  /** Exact matches on metadata values (compared as strings). */
  metadata?: Record<string, string>;
  /** Page size, 1 to 1000 (server default 100). */
  limit?: number;
  /** Start after this cursor (from an earlier page). */
  cursor?: string;
}

/** Starting, restoring or snapshotting a sandbox can take longer than an ordinary call. */
const LIFECYCLE_TIMEOUT_MS = 300_000;

const at = (id: string) => `/sandboxes/${encodeURIComponent(id)}`;

/** The sandbox endpoints of the control plane, by id; `Sandbox` builds on these. */
export class Sandboxes {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /** Creates a sandbox, ready to use when this returns (deadline 5 minutes unless `timeoutMs` is given). */
  create(params: CreateSandboxParams = {}, opts: RequestOptions = {}): Promise<SandboxWithToken> {
    return this.#http.json({ method: 'POST', path: '/sandboxes', body: params, timeoutMs: opts.timeoutMs ?? LIFECYCLE_TIMEOUT_MS, signal: opts.signal });
  }

  get(id: string, opts: RequestOptions = {}): Promise<SandboxInfo> {
    return this.#http.json({ method: 'GET', path: at(id), ...opts });
  }

  /** The team's sandboxes, newest first, one page at a time. */
  async *list(filters: ListSandboxesFilters = {}, opts: RequestOptions = {}): AsyncGenerator<SandboxInfo[]> {
    let cursor = filters.cursor;
    do {
      const query = new URLSearchParams();
      if (filters.status !== undefined) query.set('status', [filters.status].flat().join(','));
      for (const [key, value] of Object.entries(filters.metadata ?? {})) query.set(`metadata.${key}`, value);
      if (filters.limit !== undefined) query.set('limit', String(filters.limit));
      if (cursor !== undefined) query.set('cursor', cursor);
      const page = await this.#http.json<SandboxPage>({ method: 'GET', path: '/sandboxes', query, ...opts });
      yield page.sandboxes;
      cursor = page.next_cursor;
    } while (cursor !== undefined);
  }

  /** Changes name, metadata (replaced whole), timers (null disables), network rules or preview access. */
  update(id: string, params: UpdateSandboxParams, opts: RequestOptions = {}): Promise<SandboxInfo> {
    return this.#http.json({ method: 'PATCH', path: at(id), body: params, ...opts });
  }

  /**
   * Pauses an active sandbox (ConflictError when already paused). `keepMemory: false` keeps only its
   * disk: every process ends, and resume boots it afresh.
   */
  pause(id: string, opts: LifecycleOptions = {}): Promise<SandboxInfo> {
    return this.#lifecycle('pause', id, opts);
  }

  /** Resumes a paused sandbox (ConflictError when active); `keepMemory: false` boots it from its disk instead of restoring it. */
  resume(id: string, opts: LifecycleOptions = {}): Promise<SandboxWithToken> {
    return this.#lifecycle('resume', id, opts);
  }

  /** Resumes when paused, does nothing when active; either way returns the access token. */
  activate(id: string, opts: LifecycleOptions = {}): Promise<SandboxWithToken> {
    return this.#lifecycle('activate', id, opts);
  }

  /**
   * Moves a sandbox to another node (several hosts; the `sandboxes:move` permission): a running gVisor
   * sandbox keeps every process and its memory, id and access token; `node` picks the target, else
   * placement does. ConflictError when it cannot move; nothing changed then.
   */
  migrate(id: string, params: { node?: string } = {}, opts: RequestOptions = {}): Promise<SandboxInfo> {
    return this.#http.json({ method: 'POST', path: `${at(id)}/migrate`, body: params, timeoutMs: opts.timeoutMs ?? LIFECYCLE_TIMEOUT_MS, signal: opts.signal });
  }

  /** Deletes a sandbox; false when it was already gone (404 is swallowed, as the contract says of kill helpers). */
  async kill(id: string, opts: RequestOptions = {}): Promise<boolean> {
    try {
      await this.#http.json({ method: 'DELETE', path: at(id), ...opts });
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  /** CPU, memory, disk and network samples of the server's window; `since` keeps only newer points. */
  metrics(id: string, params: { since?: Date | string } = {}, opts: RequestOptions = {}): Promise<SandboxMetrics> {
    const query = new URLSearchParams();
    if (params.since !== undefined) query.set('since', params.since instanceof Date ? params.since.toISOString() : params.since);
    return this.#http.json({ method: 'GET', path: `${at(id)}/metrics`, query, ...opts });
  }

  /** Lifecycle events with reasons, oldest first; `after` (a seq) and `limit` page through them. */
  async events(id: string, params: { after?: number; limit?: number } = {}, opts: RequestOptions = {}): Promise<SandboxEvent[]> {
    const query = new URLSearchParams();
    if (params.after !== undefined) query.set('after', String(params.after));
    if (params.limit !== undefined) query.set('limit', String(params.limit));
    return (await this.#http.json<{ events: SandboxEvent[] }>({ method: 'GET', path: `${at(id)}/events`, query, ...opts })).events;
  }

  /** Files added, modified and deleted against the sandbox's base, by path; `path` keeps one subtree. */
  changes(id: string, params: { path?: string; limit?: number; cursor?: string } = {}, opts: RequestOptions = {}): Promise<SandboxChangePage> {
    const query = new URLSearchParams();
    if (params.path !== undefined) query.set('path', params.path);
    if (params.limit !== undefined) query.set('limit', String(params.limit));
    if (params.cursor !== undefined) query.set('cursor', params.cursor);
    return this.#http.json({ method: 'GET', path: `${at(id)}/changes`, query, ...opts });
  }

  /** A unified diff of one changed text file against its base version. */
  async changeDiff(id: string, path: string, opts: RequestOptions = {}): Promise<string> {
    const { body } = await this.#http.stream({ method: 'GET', path: `${at(id)}/changes`, query: new URLSearchParams({ diff: path }), ...opts });
    return new Response(body).text();
  }

  /** Copies sandbox `from`'s changes (all, or those under `paths`) into sandbox `id`; both need the same base. */
  applyChanges(id: string, from: string, paths?: string[], opts: RequestOptions = {}): Promise<ApplyChangesResult> {
    return this.#http.json({ method: 'POST', path: `${at(id)}/changes/apply`, body: { from, ...(paths ? { paths } : {}) }, timeoutMs: LIFECYCLE_TIMEOUT_MS, ...opts });
  }

  /** Runs a command to completion over the control plane (auto-resumes a paused sandbox). */
  async exec(id: string, command: string, opts: CommandOptions = {}): Promise<ExecResult> {
    const answer = await runCommand(this.#http, this.#target(id), command, opts);
    return { stdout: answer.stdout, stderr: answer.stderr, exitCode: answer.exit_code };
  }

  /** Runs a command over the control plane, streaming its output to the callbacks. */
  execStream(id: string, command: string, opts: StreamOptions = {}): Promise<StreamResult> {
    return streamCommand(this.#http, this.#target(id), command, opts);
  }

  #target(id: string): ExecTarget {
    return { path: `${at(id)}/exec` };
  }

  #lifecycle<T>(verb: 'pause' | 'resume' | 'activate', id: string, opts: LifecycleOptions): Promise<T> {
    const body = opts.keepMemory === undefined ? undefined : { keep_memory: opts.keepMemory };
    return this.#http.json({ method: 'POST', path: `${at(id)}/${verb}`, body, timeoutMs: opts.timeoutMs ?? LIFECYCLE_TIMEOUT_MS, signal: opts.signal });
  }
}
