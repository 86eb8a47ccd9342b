import { NotFoundError, TimeoutError } from './errors.ts';
import type { HttpClient, RequestOptions } from './http.ts';
import type { Snapshot, SnapshotPage } from './types.ts';

export interface CreateSnapshotOptions extends RequestOptions {
  /** A label, 1 to 64 characters. */
  name?: string;
  /** Unique per sandbox: retrying with the same key returns what the first request made instead of a second snapshot. */
  idempotencyKey?: string;
}

export interface ListSnapshotsFilters {
  /** Only the snapshots of this sandbox. */
  sandboxId?: string;
  /** Page size, 1 to 1000 (server default 100). */
  limit?: number;
  cursor?: string;
}

/** Capturing memory and disk can take a while, as can waiting for a capture that settles in the background. */
const SNAPSHOT_TIMEOUT_MS = 300_000;
const POLL_MS = 1_000;

const at = (id: string) => `/snapshots/${encodeURIComponent(id)}`;

/** Snapshots of the team's sandboxes (memory and disk); start a sandbox from one with `Sandbox.create({ from_snapshot })`. */
export class Snapshots {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /**
   * Captures an active or paused sandbox and returns the snapshot once it is ready (or failed).
   * POST is never retried: pass `idempotencyKey` to make a retry of your own safe.
   * ServerError 503 where the host's driver cannot snapshot (the container driver).
   */
  async create(sandboxId: string, opts: CreateSnapshotOptions = {}): Promise<Snapshot> {
    const timeoutMs = opts.timeoutMs ?? SNAPSHOT_TIMEOUT_MS;
    const started = Date.now();
    const body: { name?: string; idempotency_key?: string } = {};
    if (opts.name !== undefined) body.name = opts.name;
    if (opts.idempotencyKey !== undefined) body.idempotency_key = opts.idempotencyKey;
    const path = `/sandboxes/${encodeURIComponent(sandboxId)}/snapshot`;
    let snapshot = await this.#http.json<Snapshot>({ method: 'POST', path, body, timeoutMs, signal: opts.signal });
    // 202: the capture outlasted the server's deadline and settles in the background.
    while (snapshot.status === 'creating') {
      if (Date.now() - started + POLL_MS >= timeoutMs) throw new TimeoutError(`snapshot ${snapshot.id} still creating after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      snapshot = await this.get(snapshot.id, { signal: opts.signal });
    }
    return snapshot;
  }

  /** The team's snapshots, newest first, a page at a time. */
  async *list(filters: ListSnapshotsFilters = {}, opts: RequestOptions = {}): AsyncGenerator<Snapshot[]> {
    let cursor = filters.cursor;
    do {
      const query = new URLSearchParams();
      if (filters.sandboxId !== undefined) query.set('sandbox_id', filters.sandboxId);
      if (filters.limit !== undefined) query.set('limit', String(filters.limit));
      if (cursor !== undefined) query.set('cursor', cursor);
      const page = await this.#http.json<SnapshotPage>({ method: 'GET', path: '/snapshots', query, ...opts });
      yield page.snapshots;
      cursor = page.next_cursor;
    } while (cursor !== undefined);
  }

  get(id: string, opts: RequestOptions = {}): Promise<Snapshot> {
    return this.#http.json({ method: 'GET', path: at(id), ...opts });
  }

  /** Sets the label; null removes it. */
  rename(id: string, name: string | null, opts: RequestOptions = {}): Promise<Snapshot> {
    return this.#http.json({ method: 'PATCH', path: at(id), body: { name }, ...opts });
  }

  /** Deletes a snapshot and its files; false when it was already gone. ConflictError while it is being created. */
  async delete(id: string, opts: RequestOptions = {}): Promise<boolean> {
    try {
      await this.#http.json({ method: 'DELETE', path: at(id), ...opts });
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }
}
