import { badRequest } from '../../errors.ts';
import type { FileMetadata, FileMetadataStore } from '../../store/file-metadata.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';

/** Keys travel as HTTP header names (E2B's `X-Metadata-<key>`), values as header values. */
const KEY = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]{1,128}$/;
const VALUE = /^[\x20-\x7e]{0,1024}$/;
const MAX_KEYS = 64;

/**
 * User metadata on a sandbox's files (E2B's envd 0.6.2 keeps it as `user.e2b.*` xattrs; gVisor's root
 * filesystem keeps no user xattrs, so the platform keeps it, by absolute path). A write sets it or, with
 * none, clears what an earlier write set; a rename carries it, a removal drops it. Changes made by
 * commands inside the sandbox (mv, rm) are not seen.
 */
export class FileMetadataService {
  readonly #store: FileMetadataStore;

  constructor(store: FileMetadataStore) {
    this.#store = store;
  }

  /** 400 unless every key is an HTTP token and every value printable ASCII. */
  check(data: FileMetadata): void {
    const entries = Object.entries(data);
    if (entries.length > MAX_KEYS) throw badRequest(`at most ${MAX_KEYS} metadata keys`);
    for (const [k, v] of entries) {
      if (!KEY.test(k)) throw badRequest(`invalid metadata key ${JSON.stringify(k.slice(0, 130))}: an HTTP token of 1 to 128 characters`);
      if (!VALUE.test(v)) throw badRequest(`invalid metadata value for ${JSON.stringify(k)}: printable ASCII, at most 1024 characters`);
    }
  }

  written(rec: SandboxRecord, path: string, data: FileMetadata | undefined): Promise<void> {
    return this.#store.set(rec.id, path, data);
  }

  moved(rec: SandboxRecord, from: string, to: string): Promise<void> {
    return this.#store.move(rec.id, from, to);
  }

  removed(rec: SandboxRecord, path: string): Promise<void> {
    return this.#store.remove(rec.id, path);
  }

  /** The metadata of those of `paths` that have any. */
  of(rec: SandboxRecord, paths: string[]): Promise<Map<string, FileMetadata>> {
    return this.#store.get(rec.id, paths);
  }
}
