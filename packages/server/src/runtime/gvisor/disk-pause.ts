import { rm } from 'node:fs/promises';
import { exists } from '../../optional-files.ts';
import { within } from '../../timeouts.ts';
import { unmountUnder } from '../host/mounts.ts';
import { waitForExit } from '../host/pids.ts';
import { type DriverState, forget, runscOf } from './driver-state.ts';
import { channel, startNewRun } from './launch.ts';
import { gvisorSandboxPaths } from './paths.ts';
import type { Runsc } from './runsc.ts';
import { keepTmpOnDisk } from './tmp-on-disk.ts';
import { readMeta, writeMeta } from './sandbox-meta.ts';

/**
 * How long the in-sandbox `sync` may take before the stop goes on without it (and the writes the
 * sentry still holds are lost): long enough for a loaded host, where 10 s was once too short.
 */
const SYNC_TIMEOUT_MS = 60_000;
const EXIT_WAIT_MS = 5000;

/**
 * Pauses a running sandbox keeping only its disk: its writes are flushed to the host's overlay,
 * every process ends, the run is deleted. The layer, network namespace and meta stay, marked
 * `stopped`, so resume boots it afresh (bootLocked). Nothing is refused: there is no memory to save.
 * The caller holds the sandbox's lock.
 */
export async function stopLocked(st: DriverState, id: string): Promise<void> {
  const sp = gvisorSandboxPaths(st.paths, id);
  const meta = await readMeta(sp.meta);
  if (!meta) throw new Error(`sandbox ${id} not found`);
  const runsc = runscOf(st, meta);
  const rs = await runsc.state(meta.runscId);
  if (rs?.status !== 'running') throw new Error(`sandbox ${id} is not running`);
  // The sentry may still hold written file data; sync writes it through to the host's overlay.
  await within(syncInside(st, id, runsc, meta.runscId), SYNC_TIMEOUT_MS).catch((err: Error) => st.logger.warn(`gvisor: sync before stopping ${id}: ${err.message}`));
  await writeMeta(sp.meta, { ...meta, stopped: true });
  await channel(st, id).close(0);
  st.channels.delete(id);
  await runsc.kill(meta.runscId);
  await waitForExit(rs.pid, EXIT_WAIT_MS);
  forget(st, runsc, meta.runscId);
}

/** Drops a paused sandbox's checkpoint: it is left stopped, for bootLocked. The caller holds the sandbox's lock. */
export async function dropMemoryLocked(st: DriverState, id: string): Promise<void> {
  const sp = gvisorSandboxPaths(st.paths, id);
  const meta = await readMeta(sp.meta);
  if (!meta) throw new Error(`sandbox ${id} not found`);
  if (meta.stopped) return;
  if (!(await exists(sp.image))) throw new Error(`sandbox ${id} is not paused`);
  await writeMeta(sp.meta, { ...meta, stopped: true });
  await rm(sp.image, { recursive: true, force: true });
}

/**
 * `sync` as root in the sandbox, through the agent when it is connected, else (or when the agent
 * cannot run it: its channel may still be reconnecting after a restore) through runsc.
 */
async function syncInside(st: DriverState, id: string, runsc: Runsc, runscId: string): Promise<void> {
  const control = st.channels.get(id)?.control;
  if (control) {
    const proc = control.spawn({ argv: ['sync'], user: 'root', cwd: '/', stdin: false });
    const ran = await new Promise<boolean>((resolve) => {
      proc.once('exit', (info) => resolve(info.exitCode === 0));
      proc.once('error', () => resolve(false));
    });
    if (ran) return;
    st.logger.warn(`gvisor: sync through the agent of ${id} failed; syncing through runsc`);
  }
  await runsc.exec(runscId, ['sync']);
}

/**
 * Boots a sandbox stopped by stopLocked from its disk, as a new run with the environment it was
 * created with; a failed boot leaves it stopped, to be tried again. The caller holds the sandbox's lock.
 */
export async function bootLocked(st: DriverState, id: string): Promise<void> {
  const sp = gvisorSandboxPaths(st.paths, id);
  const meta = await readMeta(sp.meta);
  if (!meta) throw new Error(`sandbox ${id} not found`);
  if (!meta.stopped) throw new Error(`sandbox ${id} has no checkpoint to restore and was not stopped`);
  // A boot mounts the volumes it was given running as those it started with: no process is there to bind them from the hub.
  await unmountUnder(sp.hub);
  const booted = { ...meta, mounts: [...(meta.mounts ?? []), ...(meta.hubMounts ?? [])], hubMounts: undefined };
  await startNewRun(st, booted, meta.env ?? {}, async (runsc, runscId) => {
    await keepTmpOnDisk(sp.rootfs);
    await runsc.run(runscId, sp.dir, sp.log, !!meta.netnsPath);
  });
}
