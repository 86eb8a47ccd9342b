import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { exists } from '../../optional-files.ts';
import { checkSpec, type SandboxSpec } from '../driver.ts';
import { unmountUnder } from '../host/mounts.ts';
import { lowerDirs, mountOverlay } from '../host/overlay.ts';
import { writeSandboxEtc } from '../host/sandbox-files.ts';
import { cg, type DriverState, runscOf } from './driver-state.ts';
import { cutsConnections, needsStatxShim } from './engines.ts';
import { engineCpusFor, start, sudoShim, templateSudo, writeConfig } from './launch.ts';
import { captureNet, provisionNet } from './netns.ts';
import { gvisorSandboxPaths, sandboxOf } from './paths.ts';
import { metaOf, readMeta, writeMeta } from './sandbox-meta.ts';
import { keepTmpOnDisk } from './tmp-on-disk.ts';
import { mountHubVolumes } from './volume-hub.ts';

/** Creates and starts a sandbox from its template; a failed create leaves nothing behind. */
export function create(st: DriverState, spec: SandboxSpec): Promise<void> {
  checkSpec(spec);
  return st.mutex.run(spec.id, async () => {
    const sp = gvisorSandboxPaths(st.paths, spec.id);
    if (await exists(sp.dir)) throw new Error(`sandbox ${spec.id} already exists`);
    for (const p of [st.opts.agentBinary, spec.templateRoot]) if (!(await exists(p))) throw new Error(`${p} not found`);
    try {
      await mkdir(sp.runDir, { recursive: true });
      const engine = st.engines.default;
      const shim = !!st.shim && needsStatxShim(engine);
      const sudo = !!(await templateSudo(spec)) && !!(await sudoShim(st));
      const engineCpus = engineCpusFor(st, spec.resources.vcpuCount);
      const { ready, capped } = st.layers.acquire(spec.id, spec.resources.diskMib);
      const layer = ready.then(() => writeSandboxEtc(st.layers.upper(spec.id), spec, undefined));
      const mounted = Promise.all([layer, mkdir(sp.rootfs)]).then(() => mountOverlay(lowerDirs(spec), st.layers.upper(spec.id), st.layers.work(spec.id), sp.rootfs));
      const [subvolId, net] = await Promise.all([
        capped,
        spec.netnsPath ? (spec.netConfig ?? captureNet(spec.netnsPath)) : undefined,
        mounted,
        writeConfig(st, spec, spec.id, sp.config, sp.rootfs, sp.runDir, { shim, sudo, engineCpus, hub: true }),
        mountHubVolumes(sp.hub, undefined),
      ]);
      await writeMeta(sp.meta, { ...metaOf(spec, spec.id), subvolId, net, statxShim: shim, sudo, engineCpus, volumeHub: true, engine, cutsConnections: cutsConnections(engine) });
      await keepTmpOnDisk(sp.rootfs);
      const runsc = runscOf(st, { engine });
      await start(st, spec.id, runsc, spec.id, spec.resources.memoryMib, () => runsc.run(spec.id, sp.dir, sp.log, !!spec.netnsPath));
    } catch (err) {
      await destroyLocked(st, spec.id).catch((e: Error) => st.logger.warn(`cleanup after failed create of ${spec.id}: ${e.message}`));
      throw new Error(`creating sandbox ${spec.id} failed: ${(err as Error).message}`);
    } finally {
      st.layers.replenish();
    }
  });
}

/** Every step tolerates what an earlier, interrupted destroy (or a crash) left behind. The caller holds the sandbox's lock. */
export async function destroyLocked(st: DriverState, id: string): Promise<void> {
  const sp = gvisorSandboxPaths(st.paths, id);
  await st.channels.get(id)?.close(0);
  st.channels.delete(id);
  // Every state root: the meta naming the build may be gone after a crash.
  for (const runsc of st.engines.all()) {
    for (const rid of (await runsc.list()).filter((r) => sandboxOf(r) === id)) {
      // A run its pause left to delete in the background: a second kill and delete would only wait on the first.
      const deleting = st.deleting.get(rid);
      if (deleting) {
        await deleting;
        if (!(await runsc.list()).includes(rid)) continue;
      }
      await runsc.kill(rid);
      await runsc.deleteForce(rid);
      await cg(st)
        .remove(rid)
        .catch((err: Error) => st.logger.warn(`gvisor: ${err.message}`));
    }
  }
  await unmountUnder(sp.dir);
  const meta = await readMeta(sp.meta);
  // The netstack took the namespace's addresses; hand them back for whoever uses it next.
  if (meta?.netnsPath && meta.net && (await exists(meta.netnsPath))) {
    await provisionNet(meta.netnsPath, meta.net).catch((err: Error) => st.logger.warn(`gvisor: ${err.message}`));
  }
  await st.layers.remove(id, meta?.subvolId);
  await rm(join(st.paths.checkpointsDir, id), { recursive: true, force: true });
  await rm(sp.dir, { recursive: true, force: true });
}
