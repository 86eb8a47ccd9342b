import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import pMap from 'p-map';
import { setTimeout as sleep } from 'node:timers/promises';
import { exists, readJson, subdirNames } from '../../optional-files.ts';
import type { Logger } from '../host/layer-store.ts';
import { isAlive, readPidFile, waitForExit } from '../host/pids.ts';
import { SAVED_EXIT_WAIT_MS } from './checkpoint.ts';
import type { DriverState } from './driver-state.ts';
import type { RunscEngine, RunscEngines } from './engines.ts';
import { channel } from './launch.ts';
import { runCaptured } from '../host/posix-spawn.ts';
import { removeTree } from './layer-copies.ts';
import { type GvisorPaths, gvisorSandboxPaths, sandboxOf, snapshotPaths } from './paths.ts';
import type { Runsc } from './runsc.ts';
import { health } from './status.ts';

/** How long a restarted server waits for a checkpoint the previous one left running. */
const ORPHAN_CHECKPOINT_WAIT_MS = 120_000;

/** Earlier versions kept checkpoint and snapshot images inside the layer store: move them out once. */
export async function moveLegacyImages(paths: GvisorPaths): Promise<void> {
  const legacy = paths.legacyCheckpointsDir;
  for (const id of await subdirNames(legacy)) {
    const to = join(paths.checkpointsDir, id);
    if (!(await exists(to))) await runCaptured('mv', ['-T', '--', join(legacy, id), to]);
  }
  await rm(legacy, { recursive: true, force: true });
  for (const name of await subdirNames(paths.snapshotsDir)) {
    const snap = snapshotPaths(paths, name);
    if (await exists(snap.legacyImage)) await runCaptured('mv', ['-T', '--', snap.legacyImage, snap.image]);
  }
}

/**
 * A server killed during a checkpoint leaves the checkpoint shell running (it
 * finishes and renames the image only on success) or a partial image. Wait
 * for the first, drop the second: each sandbox ends up with a complete image
 * (paused) or none (running, or failed if gVisor ended it). `forget` deletes
 * a runsc container of an earlier run (or of a sandbox paused keeping only its disk) in the background.
 */
export async function settleInterruptedCaptures(paths: GvisorPaths, engines: RunscEngines, logger: Logger, forget: (runsc: Runsc, runscId: string) => void): Promise<void> {
  // Many at once: a host may hold 10,000 sandboxes, and this is on the way to serving.
  await pMap(
    await subdirNames(paths.sandboxesDir),
    async (id) => {
      const sp = gvisorSandboxPaths(paths, id);
      const pid = await readPidFile(sp.checkpointPid).catch(() => 0);
      if (pid) {
        logger.warn(`gvisor: waiting for the checkpoint of ${id} left by the previous server (pid ${pid})`);
        const deadline = performance.now() + ORPHAN_CHECKPOINT_WAIT_MS;
        while (isAlive(pid) && performance.now() < deadline) await sleep(20);
        await rm(sp.checkpointPid, { force: true });
        // A complete save: its sandbox may still be exiting (runsc 20240729), and would look running meanwhile.
        const meta = await readJson<{ runscId: string; engine?: RunscEngine }>(sp.meta);
        const saved = meta && (await exists(sp.image)) ? await engines.for(meta.engine).sandboxPid(meta.runscId) : undefined;
        if (saved) await waitForExit(saved, SAVED_EXIT_WAIT_MS);
      }
      await rm(sp.partial, { recursive: true, force: true });
    },
    { concurrency: 32 },
  );
  // runsc containers of earlier runs (saved ones, whose background delete a restart cut short).
  for (const runsc of engines.all()) {
    for (const rid of await runsc.list()) {
      const meta = await readJson<{ runscId?: string; stopped?: boolean }>(gvisorSandboxPaths(paths, sandboxOf(rid)).meta);
      if (meta?.runscId !== rid || meta.stopped || (await exists(gvisorSandboxPaths(paths, sandboxOf(rid)).image))) forget(runsc, rid);
    }
  }
  for (const name of await subdirNames(paths.snapshotsDir)) {
    if (name.endsWith('.partial')) await removeTree(join(paths.snapshotsDir, name));
  }
  // An image whose snapshot never completed (the crash came between the two renames).
  for (const name of await subdirNames(paths.snapshotImagesDir)) {
    const complete = !name.endsWith('.partial') && (await exists(snapshotPaths(paths, name).meta));
    if (!complete) await rm(join(paths.snapshotImagesDir, name), { recursive: true, force: true });
  }
}

/**
 * After a restart, listens again for the agents of running sandboxes, which redial every 500 ms while
 * nobody listens. Opened only at a sandbox's first request, that request waited for the redial, and a
 * pause read the sandbox through `runsc exec` instead of its agent. In the background, each sandbox
 * under its lock: a request that came first has opened its channel, or is closing it for a save.
 */
export async function listenForRunningAgents(st: DriverState): Promise<void> {
  const ids = await subdirNames(st.paths.sandboxesDir).catch(() => [] as string[]);
  await pMap(
    ids,
    (id) =>
      st.mutex
        .run(id, async () => {
          if (st.channels.get(id)?.listening) return;
          // From runsc's state file, not `runsc state`: a runsc process per running sandbox slowed the start beside them (by 0.75 s with 50).
          if ((await health(st, id)) === 'alive') await channel(st, id).open();
        })
        .catch((err: Error) => st.logger.warn(`gvisor: listening for the agent of ${id} after a restart: ${err.message}`)),
    { concurrency: 8 },
  );
}
