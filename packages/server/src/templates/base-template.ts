import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { unmountUnder } from '../runtime/host/mounts.ts';
import { baseRecipe, recipeHash } from './base-recipe.ts';
import { buildBase, type BuildProgress, type ProgressFn } from './build-base.ts';
import { acquireLock } from './build-lock.ts';

export type { BuildProgress } from './build-base.ts';

interface SharedBuild {
  done: Promise<string>;
  listeners: Set<ProgressFn>;
}

/** Builds in progress in this process, by rootfs path: concurrent callers share one. */
const inFlight = new Map<string, SharedBuild>();

/**
 * Returns the root filesystem of `platform/base`, building it first if the
 * cache has no complete build of the current recipe. The result lives at
 * `<imageDir>/templates/platform-base/<recipe-hash>/rootfs` and is never
 * modified afterwards (sandboxes share it read-only).
 */
export function ensureBaseTemplate(imageDir: string, opts: { mirror?: string; onProgress?: ProgressFn } = {}): Promise<string> {
  const recipe = baseRecipe();
  const hash = recipeHash(recipe);
  const baseDir = join(imageDir, 'templates', 'platform-base');
  const finalDir = join(baseDir, hash);
  const rootfs = join(finalDir, 'rootfs');
  if (existsSync(rootfs)) return Promise.resolve(rootfs);

  let shared = inFlight.get(rootfs);
  if (!shared) {
    const listeners = new Set<ProgressFn>();
    const emit = (p: BuildProgress): void => {
      for (const l of listeners) l(p);
    };
    const done = buildLocked(baseDir, finalDir, hash, imageDir, opts.mirror, emit).finally(() => inFlight.delete(rootfs));
    shared = { done, listeners };
    inFlight.set(rootfs, shared);
  }
  if (opts.onProgress) shared.listeners.add(opts.onProgress);
  return shared.done;
}

async function buildLocked(baseDir: string, finalDir: string, hash: string, imageDir: string, mirror: string | undefined, emit: ProgressFn): Promise<string> {
  const rootfs = join(finalDir, 'rootfs');
  await mkdir(baseDir, { recursive: true });
  const release = await acquireLock(join(baseDir, '.lock'), () => emit({ phase: 'waiting', done: 0, total: 1, line: 'another process is building this template' }));
  try {
    if (existsSync(rootfs)) return rootfs;
    // Leftovers of a crashed build (possibly with debootstrap's /proc still mounted).
    for (const entry of await readdir(baseDir)) {
      if (!entry.startsWith('.build-')) continue;
      await unmountUnder(join(baseDir, entry));
      await rm(join(baseDir, entry), { recursive: true, force: true });
    }
    const recipe = baseRecipe();
    const tmp = join(baseDir, `.build-${hash}`);
    await mkdir(tmp);
    try {
      await buildBase(join(tmp, 'rootfs'), recipe, join(imageDir, 'cache'), mirror, emit);
      await writeFile(join(tmp, 'recipe.json'), `${JSON.stringify(recipe, null, 2)}\n`);
      await rm(finalDir, { recursive: true, force: true });
      await rename(tmp, finalDir);
    } catch (err) {
      await unmountUnder(tmp).catch(() => undefined);
      await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
      throw err;
    }
    return rootfs;
  } finally {
    await release();
  }
}
