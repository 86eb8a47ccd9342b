import { exists, readJson, subdirNames } from '../../optional-files.ts';
import type { EngineState, EngineStats } from '../driver.ts';
import { type EngineHealth, pidHealth } from '../engine-health.ts';
import { cg, type DriverState, runscOf } from './driver-state.ts';
import { gvisorSandboxPaths, sandboxOf, snapshotPaths } from './paths.ts';
import type { SnapshotMeta } from './snapshots.ts';
import type { RunscState } from './runsc.ts';
import { readMeta } from './sandbox-meta.ts';

/** `runsc state` of a sandbox's current run. */
export async function runscState(st: DriverState, id: string): Promise<RunscState | undefined> {
  const meta = await readMeta(gvisorSandboxPaths(st.paths, id).meta);
  return meta ? runscOf(st, meta).state(meta.runscId) : undefined;
}

export async function state(st: DriverState, id: string): Promise<EngineState> {
  const sp = gvisorSandboxPaths(st.paths, id);
  const meta = await readMeta(sp.meta);
  const [rs, image, dir, layer] = await Promise.all([meta && runscOf(st, meta).state(meta.runscId), exists(sp.image), exists(sp.dir), exists(st.layers.dir(id))]);
  if (rs?.status === 'running') return 'running';
  // Paused with its memory (a checkpoint image) or with only its disk (disk-pause.ts).
  if (image || (meta?.stopped && layer)) return 'paused';
  return rs || dir || layer ? 'stopped' : 'missing';
}

/** Every sandbox with anything left on this host: a dir, a runsc container, a layer or a checkpoint. */
export async function list(st: DriverState): Promise<string[]> {
  const [dirs, runscIds, layerIds, checkpoints] = await Promise.all([
    subdirNames(st.paths.sandboxesDir),
    Promise.all(st.engines.all().map((r) => r.list())).then((ids) => ids.flat().map(sandboxOf)),
    st.layers.list(),
    subdirNames(st.paths.checkpointsDir),
  ]);
  return [...new Set([...dirs, ...runscIds, ...layerIds, ...checkpoints])].sort();
}

/** Template roots and layers that this host's sandboxes and snapshots stack on. */
export async function templatePaths(st: DriverState): Promise<string[]> {
  const paths: string[] = [];
  for (const id of await subdirNames(st.paths.sandboxesDir)) {
    const meta = await readMeta(gvisorSandboxPaths(st.paths, id).meta);
    if (meta) paths.push(meta.templateRoot, ...(meta.templateLayers ?? []));
  }
  for (const id of await subdirNames(st.paths.snapshotsDir)) {
    const meta = await readJson<SnapshotMeta>(snapshotPaths(st.paths, id.replace(/\.partial$/, '')).meta);
    if (meta) paths.push(meta.templateRoot, ...(meta.templateLayers ?? []));
  }
  return paths;
}

export async function health(st: DriverState, id: string): Promise<EngineHealth> {
  const meta = await readMeta(gvisorSandboxPaths(st.paths, id).meta);
  if (!meta || st.capturing.has(id)) return 'unknown';
  return pidHealth(await runscOf(st, meta).sandboxPid(meta.runscId), cg(st).dir('memory', meta.runscId));
}

export async function stats(st: DriverState, id: string): Promise<EngineStats> {
  const meta = await readMeta(gvisorSandboxPaths(st.paths, id).meta);
  if (!meta) throw new Error(`sandbox ${id} not found`);
  const [memoryBytes, cpuUsageNs, diskBytes] = await Promise.all([
    cg(st).readNumber('memory', meta.runscId, 'memory.usage_in_bytes'),
    cg(st).readNumber('cpuacct', meta.runscId, 'cpuacct.usage'),
    st.layers.usage(id, meta.subvolId),
  ]);
  return { memoryBytes, cpuUsageNs, diskBytes };
}
