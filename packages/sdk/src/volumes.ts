import { NotFoundError } from './errors.ts';
import type { HttpClient, RequestOptions } from './http.ts';
import type { CreateVolumeParams, Volume, VolumePage } from './types.ts';
import { VolumeFiles } from './volume-files.ts';

export interface ListVolumesFilters {
  /** Page size, 1 to 1000 (server default 100). */
  limit?: number;
  cursor?: string;
}

const at = (volume: string) => `/volumes/${encodeURIComponent(volume)}`;

/**
 * The team's volumes: disks that outlive sandboxes, addressed by id or name. Mount one with
 * `Sandbox.create({ volumes: [{ volume, path, read_only? }] })`; reach its files without a sandbox through `files`.
 */
export class Volumes {
  readonly #http: HttpClient;
  readonly files: VolumeFiles;

  constructor(http: HttpClient) {
    this.#http = http;
    this.files = new VolumeFiles(http);
  }

  /** Makes a volume of `size_mib` (its quota). ConflictError when the team has one of that name. */
  create(params: CreateVolumeParams, opts: RequestOptions = {}): Promise<Volume> {
    return this.#http.json({ method: 'POST', path: '/volumes', body: params, ...opts });
  }

  /** The team's volumes, newest first, a page at a time. */
  async *list(filters: ListVolumesFilters = {}, opts: RequestOptions = {}): AsyncGenerator<Volume[]> {
    let cursor = filters.cursor;
    do {
      const query = new URLSearchParams();
      if (filters.limit !== undefined) query.set('limit', String(filters.limit));
      if (cursor !== undefined) query.set('cursor', cursor);
      const page = await this.#http.json<VolumePage>({ method: 'GET', path: '/volumes', query, ...opts });
      yield page.volumes;
      cursor = page.next_cursor;
    } while (cursor !== undefined);
  }

  get(volume: string, opts: RequestOptions = {}): Promise<Volume> {
    return this.#http.json({ method: 'GET', path: at(volume), ...opts });
  }

  /** Raises the quota at once; BadRequestError for a size below the current one (volumes never shrink). */
  grow(volume: string, sizeMib: number, opts: RequestOptions = {}): Promise<Volume> {
    return this.#http.json({ method: 'PATCH', path: at(volume), body: { size_mib: sizeMib }, ...opts });
  }

  /**
   * Deletes a volume and its files for good; false when it was already gone (a retried DELETE may find
   * it so). ConflictError while a sandbox that is not deleted mounts it.
   */
  async delete(volume: string, opts: RequestOptions = {}): Promise<boolean> {
    try {
      await this.#http.json({ method: 'DELETE', path: at(volume), ...opts });
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }
}
