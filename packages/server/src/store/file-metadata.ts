import { type ExpressionBuilder, sql } from 'kysely';
import type { Db } from './db.ts';
import type { Database } from './schema.ts';

export type FileMetadata = Record<string, string>;

/** `path` itself or anything beneath it (substr works alike in SQLite and PostgreSQL; LIKE's escapes do not). */
const atOrBeneath = (path: string) => {
  const dir = `${path}/`;
  return (eb: ExpressionBuilder<Database, 'file_metadata'>) => eb.or([eb('path', '=', path), eb(sql<string>`substr(path, 1, ${dir.length})`, '=', dir)]);
};

/** User metadata on sandbox files, by absolute path. */
export class FileMetadataStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** The metadata of those of `paths` that have any. */
  async get(sandboxId: string, paths: string[]): Promise<Map<string, FileMetadata>> {
    if (paths.length === 0) return new Map();
    const rows = await this.#db.selectFrom('file_metadata').select(['path', 'data']).where('sandbox_id', '=', sandboxId).where('path', 'in', paths).execute();
    return new Map(rows.map((r) => [r.path, JSON.parse(r.data) as FileMetadata]));
  }

  /** Sets a file's metadata; none (or an empty object) removes it. */
  async set(sandboxId: string, path: string, data: FileMetadata | undefined): Promise<void> {
    await this.#db.transaction().execute(async (tx) => {
      await tx.deleteFrom('file_metadata').where('sandbox_id', '=', sandboxId).where('path', '=', path).execute();
      if (data && Object.keys(data).length > 0)
        await tx
          .insertInto('file_metadata')
          .values({ sandbox_id: sandboxId, path, data: JSON.stringify(data) })
          .execute();
    });
  }

  /** A rename: the metadata of `from` and of everything beneath it follows. */
  async move(sandboxId: string, from: string, to: string): Promise<void> {
    await this.#db.transaction().execute(async (tx) => {
      const rows = await tx.selectFrom('file_metadata').select(['path', 'data']).where('sandbox_id', '=', sandboxId).where(atOrBeneath(from)).execute();
      await this.#removeIn(tx, sandboxId, to);
      await this.#removeIn(tx, sandboxId, from);
      for (const r of rows)
        await tx
          .insertInto('file_metadata')
          .values({ sandbox_id: sandboxId, path: to + r.path.slice(from.length), data: r.data })
          .execute();
    });
  }

  /** A removal: `path` and everything beneath it. */
  async remove(sandboxId: string, path: string): Promise<void> {
    await this.#removeIn(this.#db, sandboxId, path);
  }

  async #removeIn(db: Db, sandboxId: string, path: string): Promise<void> {
    await db.deleteFrom('file_metadata').where('sandbox_id', '=', sandboxId).where(atOrBeneath(path)).execute();
  }
}
