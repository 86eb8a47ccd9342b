import { SandpitError } from './errors.ts';
import type { FileData, ReadOptions } from './files.ts';
import type { HttpClient, RequestOptions } from './http.ts';
import type { VolumeFileEntry } from './types.ts';

/**
 * Whole-file transfers may be large: their deadline is 10 minutes unless `timeoutMs` says otherwise
 * (a streamed read's deadline covers only the wait for the first byte).
 */
const TRANSFER_TIMEOUT_MS = 600_000;

const filesOf = (volume: string) => `/volumes/${encodeURIComponent(volume)}/files`;
const pathQuery = (path: string) => new URLSearchParams({ path });

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
    const rawBody = data instanceof ArrayBuffer ? new Uint8Array(data) : data;
    return this.#http.json({ method: 'PUT', path: filesOf(volume), query: pathQuery(path), rawBody, timeoutMs: opts.timeoutMs ?? TRANSFER_TIMEOUT_MS, signal: opts.signal });
  }

  /** Downloads a file. GET: retried on 429, 5xx and network errors until the body starts. */
  read(volume: string, path: string, opts?: ReadOptions & { format?: 'bytes' }): Promise<Uint8Array>;
  read(volume: string, path: string, opts: ReadOptions & { format: 'text' }): Promise<string>;
  read(volume: string, path: string, opts: ReadOptions & { format: 'stream' }): Promise<ReadableStream<Uint8Array>>;
  async read(volume: string, path: string, opts: ReadOptions = {}): Promise<Uint8Array | string | ReadableStream<Uint8Array>> {
    const format = opts.format ?? 'bytes';
    const timeoutMs = opts.timeoutMs ?? (format === 'stream' ? undefined : TRANSFER_TIMEOUT_MS);
    const { body, controller } = await this.#http.stream({ method: 'GET', path: filesOf(volume), query: pathQuery(path), timeoutMs, signal: opts.signal });
    if (format === 'stream') return body;
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const bytes = new Uint8Array(await new Response(body).arrayBuffer());
      return format === 'text' ? new TextDecoder().decode(bytes) : bytes;
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      throw new SandpitError(`GET ${filesOf(volume)}: the download broke: ${(err as Error).message}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
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
