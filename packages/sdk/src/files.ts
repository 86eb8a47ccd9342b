import type { DataPlane } from './data-plane.ts';
import { DEFAULT_IDLE_TIMEOUT_MS } from './exec.ts';
import type { RequestOptions } from './http.ts';
import { readSse } from './sse.ts';
import { downloadAs, pathQuery, readTimeout, TRANSFER_TIMEOUT_MS, uploadBody } from './transfers.ts';
import type { FileEntry, FileWatchEvent } from './types.ts';

/** What `write` accepts: text (UTF-8), bytes, a Blob, or a stream that is uploaded as it is read. */
export type FileData = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array>;

export interface ReadOptions extends RequestOptions {
  /** `bytes` (default) a Uint8Array, `text` a UTF-8 string, `stream` the body as it arrives (for large files). */
  format?: 'bytes' | 'text' | 'stream';
}

export interface WatchOptions extends RequestOptions {
  /** Also watch subdirectories (default false). */
  recursive?: boolean;
  onEvent: (event: FileWatchEvent) => void;
  /** Called once when the watch ends other than by `close()`: the stream broke or timed out. */
  onError?: (err: unknown) => void;
  /** The watch fails when nothing, not even a keepalive (every 15 s), arrives for this long (default 45 000). */
  idleTimeoutMs?: number;
}

/** A running watch: `close()` stops it; `done` settles when it ends (the watched directory went away, or close). */
export interface FileWatch {
  close(): void;
  done: Promise<void>;
}

/** The sandbox's filesystem over the data plane; relative paths are relative to /home/user, and everything runs as `user`. */
export class Files {
  readonly #plane: DataPlane;

  constructor(plane: DataPlane) {
    this.#plane = plane;
  }

  /** Downloads a file. GET: retried on 429, 5xx and network errors until the body starts. */
  read(path: string, opts?: ReadOptions & { format?: 'bytes' }): Promise<Uint8Array>;
  read(path: string, opts: ReadOptions & { format: 'text' }): Promise<string>;
  read(path: string, opts: ReadOptions & { format: 'stream' }): Promise<ReadableStream<Uint8Array>>;
  async read(path: string, opts: ReadOptions = {}): Promise<Uint8Array | string | ReadableStream<Uint8Array>> {
    return downloadAs(await this.#plane.stream({ method: 'GET', path: '/files', query: pathQuery(path), timeoutMs: readTimeout(opts), signal: opts.signal }), opts, 'GET /files');
  }

  /**
   * Uploads a file (PUT, the raw body; never retried, as a stream cannot be replayed). Missing parent
   * directories are created; an existing file is replaced atomically. Returns the new file's entry.
   */
  write(path: string, data: FileData, opts: RequestOptions = {}): Promise<FileEntry> {
    return this.#plane.json({ method: 'PUT', path: '/files', query: pathQuery(path), rawBody: uploadBody(data), timeoutMs: opts.timeoutMs ?? TRANSFER_TIMEOUT_MS, signal: opts.signal });
  }

  /** A directory's entries, sorted by name. */
  async list(path: string, opts: RequestOptions = {}): Promise<FileEntry[]> {
    return (await this.#plane.json<{ entries: FileEntry[] }>({ method: 'GET', path: '/files/list', query: pathQuery(path), ...opts })).entries;
  }

  /** A file's or directory's entry (a symlink is reported as itself). NotFoundError when absent. */
  stat(path: string, opts: RequestOptions = {}): Promise<FileEntry> {
    return this.#plane.json({ method: 'GET', path: '/files/stat', query: pathQuery(path), ...opts });
  }

  /** Creates a directory; with `parents` (default true) like mkdir -p. */
  mkdir(path: string, opts: RequestOptions & { parents?: boolean } = {}): Promise<FileEntry> {
    const { parents, ...request } = opts;
    return this.#plane.json({ method: 'POST', path: '/files/mkdir', body: parents === undefined ? { path } : { path, parents }, ...request });
  }

  /** Removes a file or directory (`recursive` for a non-empty one; otherwise that is a ConflictError). */
  remove(path: string, opts: RequestOptions & { recursive?: boolean } = {}): Promise<void> {
    const { recursive, ...request } = opts;
    return this.#plane.json({ method: 'POST', path: '/files/remove', body: recursive === undefined ? { path } : { path, recursive }, ...request });
  }

  /** Renames or moves (atomic); with `overwrite: false` an existing target is a ConflictError. */
  rename(from: string, to: string, opts: RequestOptions & { overwrite?: boolean } = {}): Promise<FileEntry> {
    const { overwrite, ...request } = opts;
    return this.#plane.json({ method: 'POST', path: '/files/rename', body: overwrite === undefined ? { from, to } : { from, to, overwrite }, ...request });
  }

  /**
   * Watches a directory; resolves once the watch is in place, so changes made after that are seen.
   * Events go to `onEvent` until `close()`, or until the directory itself is removed or moved.
   */
  async watch(path: string, opts: WatchOptions): Promise<FileWatch> {
    const query = pathQuery(path);
    if (opts.recursive) query.set('recursive', 'true');
    const opened = await this.#plane.stream({ method: 'GET', path: '/files/watch', query, timeoutMs: opts.timeoutMs, signal: opts.signal });
    let closed = false;
    const what = `GET /files/watch ${path}`;
    const follow = async () => {
      try {
        for await (const raw of readSse(opened.body, { idleTimeoutMs: opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, controller: opened.controller, signal: opts.signal, what })) {
          const event = raw as FileWatchEvent;
          opts.onEvent(event);
          if (event.finished) return;
        }
      } catch (err) {
        if (!closed) opts.onError?.(err);
      }
    };
    return {
      close() {
        closed = true;
        opened.controller.abort();
      },
      done: follow(),
    };
  }
}
