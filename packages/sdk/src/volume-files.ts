import type { FileData, ReadOptions } from './files.ts';
import type { HttpClient, RequestOptions } from './http.ts';
import { downloadAs, pathQuery, readTimeout, TRANSFER_TIMEOUT_MS, uploadBody } from './transfers.ts';
import type { VolumeFileEntry } from './types.ts';

const filesOf = (volume: string) => `/volumes/${encodeURIComponent(volume)}/files`;

/**
 * A volume's files without a sandbox (on the control plane). `volume` is its id or name; paths are
 * from the volume's root (`/a/b` or `a/b`), and symlinks leading out of it are refused.
 */
export class VolumeFiles {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /**
   * Uploads a file (PUT, the raw body, streamed; never retried, as a stream cannot be replayed). Missing
   * parent directories are made; an existing file is replaced atomically. InsufficientStorageError (507)
   * when the volume is full, and then nothing is written.
   */
  write(volume: string, path: string, data: FileData, opts: RequestOptions = {}): Promise<VolumeFileEntry> {
    return this.#http.json({ method: 'PUT', path: filesOf(volume), query: pathQuery(path), rawBody: uploadBody(data), timeoutMs: opts.timeoutMs ?? TRANSFER_TIMEOUT_MS, signal: opts.signal });
  }

  /** Downloads a file. GET: retried on 429, 5xx and network errors until the body starts. */
  read(volume: string, path: string, opts?: ReadOptions & { format?: 'bytes' }): Promise<Uint8Array>;
  read(volume: string, path: string, opts: ReadOptions & { format: 'text' }): Promise<string>;
  read(volume: string, path: string, opts: ReadOptions & { format: 'stream' }): Promise<ReadableStream<Uint8Array>>;
  async read(volume: string, path: string, opts: ReadOptions = {}): Promise<Uint8Array | string | ReadableStream<Uint8Array>> {
    return downloadAs(await this.#http.stream({ method: 'GET', path: filesOf(volume), query: pathQuery(path), timeoutMs: readTimeout(opts), signal: opts.signal }), opts, `GET ${filesOf(volume)}`);
  }

  /** A directory's entries, sorted by name (default: the volume's root). */
  async list(volume: string, path = '/', opts: RequestOptions = {}): Promise<VolumeFileEntry[]> {
    return (await this.#http.json<{ entries: VolumeFileEntry[] }>({ method: 'GET', path: `${filesOf(volume)}/list`, query: pathQuery(path), ...opts })).entries;
  }

  /** Removes a file, a symlink (itself) or an empty directory; ConflictError for a directory that is not empty. */
  remove(volume: string, path: string, opts: RequestOptions = {}): Promise<void> {
    return this.#http.json({ method: 'DELETE', path: filesOf(volume), query: pathQuery(path), ...opts });
  }
}
