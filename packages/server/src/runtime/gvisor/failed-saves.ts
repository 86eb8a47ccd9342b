import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { DriverState } from './driver-state.ts';
import { gvisorSandboxPaths } from './paths.ts';

/** Enough failures to see a pattern in, few enough that a host failing every save does not fill its disk. */
const KEPT = 20;

/**
 * Keeps runsc's logs of a save that took its sandbox down (its run's log, with the sentry's panic, and
 * the checkpoint's), since the sandbox's directory goes with it: the cause of a rare failure is in them.
 */
export async function keepFailedSaveLogs(st: DriverState, id: string): Promise<void> {
  const sp = gvisorSandboxPaths(st.paths, id);
  const dir = join(st.paths.failedSavesDir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${id}`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await Promise.all([sp.log, sp.checkpointLog].map((f) => copyFile(f, join(dir, basename(f))).catch(() => undefined)));
    const all = (await readdir(st.paths.failedSavesDir)).sort();
    await Promise.all(all.slice(0, Math.max(0, all.length - KEPT)).map((d) => rm(join(st.paths.failedSavesDir, d), { recursive: true, force: true })));
    st.logger.warn(`gvisor: the save of ${id} ended the sandbox; runsc's logs are kept in ${dir}`);
  } catch (err) {
    st.logger.warn(`gvisor: keeping the logs of ${id}'s failed save: ${(err as Error).message}`);
  }
}
