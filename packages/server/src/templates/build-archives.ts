import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
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

  /** Whether the team has archive `hash`; one asked about is marked as just used (collect keeps it a while longer). */
  async has(teamId: string, hash: string): Promise<boolean> {
    const path = this.path(teamId, hash);
    const found = await stat(path).then(
      (s) => s.isFile(),
      () => false,
    );
    if (found) await utimes(path, new Date(), new Date()).catch(() => undefined);
    return found;
  }

  /** Every archive and unfinished write, with when it was last written or asked about. */
  async entries(): Promise<{ teamId: string; name: string; usedMs: number }[]> {
    const out: { teamId: string; name: string; usedMs: number }[] = [];
    for (const teamId of await readdir(this.dir).catch(() => [] as string[])) {
      for (const name of await readdir(join(this.dir, teamId)).catch(() => [] as string[])) {
        const s = await stat(join(this.dir, teamId, name)).catch(() => undefined);
        if (s?.isFile()) out.push({ teamId, name, usedMs: s.mtimeMs });
      }
    }
    return out;
  }

  async remove(teamId: string, name: string): Promise<void> {
    await rm(join(this.dir, teamId, name), { force: true });
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
