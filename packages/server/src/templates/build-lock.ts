import { link, readFile, rm, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive } from '../runtime/host/pids.ts';

/**
 * Takes an exclusive lock file holding our pid, so two processes never build
 * the same template at once; a lock whose owner has died is taken over. The
 * pid is written to a private file first and hard-linked into place, so the
 * lock never exists without its owner in it. Returns the release function.
 */
export async function acquireLock(path: string, onWait?: () => void): Promise<() => Promise<void>> {
  const mine = `${path}.${process.pid}`;
  await writeFile(mine, String(process.pid));
  let waited = false;
  try {
    for (;;) {
      try {
        await link(mine, path);
        return async () => {
          await rm(path, { force: true });
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const owner = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      if (!owner || !isAlive(owner)) {
        await rm(path, { force: true });
        continue;
      }
      if (!waited && onWait) onWait();
      waited = true;
      await sleep(250);
    }
  } finally {
    await rm(mine, { force: true });
  }
}
