import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../runtime/host/run-command.ts';

/**
 * Step layers of built templates, content-addressed: `<dir>/<key>/root` holds
 * the files one build step changed (an overlay upper dir, whiteouts included),
 * keyed by hash(parent key + step). A layer is complete once its directory
 * exists under its key (written elsewhere, then renamed), and never changes.
 */
export class LayerCache {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  root(key: string): string {
    return join(this.dir, key, 'root');
  }

  async has(key: string): Promise<boolean> {
    return stat(this.root(key)).then(
      () => true,
      () => false,
    );
  }

  /** Keys of the complete layers. */
  async keys(): Promise<string[]> {
    const entries = await readdir(this.dir, { withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
  }

  /** Removes layer `key`: first renamed out of its place, so it is never seen half deleted. */
  async remove(key: string): Promise<void> {
    const doomed = join(this.dir, `.tmp-gone-${key}-${process.pid}`);
    const moved = await rename(join(this.dir, key), doomed).then(
      () => true,
      () => false,
    );
    if (moved) await rm(doomed, { recursive: true, force: true });
  }

  /** Copies `upper` (a stopped or idle sandbox's writes) in as layer `key`; returns its size in bytes. */
  async capture(upper: string, key: string): Promise<number> {
    await mkdir(this.dir, { recursive: true });
    const tmp = join(this.dir, `.tmp-${key}-${process.pid}-${Date.now()}`);
    try {
      await mkdir(tmp);
      // -a keeps owners, modes, whiteout devices and overlay xattrs (opaque dirs).
      await runCommand('cp', ['-a', '--', upper, join(tmp, 'root')]);
      const bytes = await layerBytes(join(tmp, 'root'));
      await rm(join(this.dir, key), { recursive: true, force: true });
      await rename(tmp, join(this.dir, key));
      return bytes;
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      throw err;
    }
  }
}

/** Chains a step onto its parent's key: equal keys mean equal filesystem results. */
export function chainKey(parent: string, step: unknown): string {
  return createHash('sha256').update(parent).update('\0').update(JSON.stringify(step)).digest('hex').slice(0, 24);
}

/** Apparent size of the files in a layer. */
export async function layerBytes(path: string): Promise<number> {
  let total = 0;
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = join(d, e.name);
      const st = await lstat(p).catch(() => undefined);
      if (!st) continue;
      total += st.size;
      if (e.isDirectory()) await walk(p);
    }
  };
  await walk(path);
  return total;
}
