import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** The archive is larger than a template may be. */
export class ArchiveTooLarge extends Error {}

/**
 * Build-context archives a team uploaded for its template builds (E2B's COPY files), by the
 * hash the client named them with: `<dir>/<team>/<hash>`. A file is complete once it is
 * there (written aside, then renamed).
 */
export class BuildArchives {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  path(teamId: string, hash: string): string {
    return join(this.dir, teamId, hash);
  }

  async has(teamId: string, hash: string): Promise<boolean> {
    return stat(this.path(teamId, hash)).then(
      (s) => s.isFile(),
      () => false,
    );
  }

  /** Stores the body as the team's archive `hash`, replacing an earlier one; at most `maxBytes`. */
  async save(teamId: string, hash: string, body: Readable, maxBytes: number): Promise<number> {
    await mkdir(join(this.dir, teamId), { recursive: true });
    const tmp = join(this.dir, teamId, `.tmp-${hash}-${process.pid}-${Date.now()}`);
    let bytes = 0;
    try {
      await pipeline(
        body,
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const c of chunks) {
            bytes += c.length;
            if (bytes > maxBytes) throw new ArchiveTooLarge(`the archive is larger than ${Math.floor(maxBytes / 1024 / 1024)} MiB, the template size limit`);
            yield c;
          }
        },
        createWriteStream(tmp),
      );
      await rename(tmp, this.path(teamId, hash));
      return bytes;
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }
}
