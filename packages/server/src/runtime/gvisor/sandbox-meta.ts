import { readJson, writeFileAtomic } from '../../optional-files.ts';
import type { BindMount, NetConfig, SandboxSpec } from '../driver.ts';
import type { LayeredSandboxMeta } from '../host/sandbox-meta.ts';
import type { RunscEngine } from './engines.ts';

/** Kept on disk per sandbox so that a restarted server can resume, snapshot and destroy it. */
export interface SandboxMeta extends LayeredSandboxMeta {
  netnsPath?: string;
  net?: NetConfig;
  mounts?: BindMount[];
  /** Runs with the statx shim preloaded (restores must mount exactly what the checkpoint had). */
  statxShim?: boolean;
  /** Runs with the agent standing in for sudo (launch.ts); restores must mount exactly what the checkpoint had. */
  sudo?: boolean;
  /**
   * CPUs its engine boots on when more than vcpu_count, the sandbox then shown vcpu_count (launch.ts);
   * restores must mount exactly what the checkpoint had. Absent: vcpu_count (created before).
   */
  engineCpus?: number;
  /** Its runs mount the volume hub (volume-hub.ts), so it can take volumes while it runs; absent: started before the hub. */
  volumeHub?: boolean;
  /** Volumes given to it running, slot `i` of the hub each (volume-hub.ts); `mounts` has those it started with. */
  hubMounts?: BindMount[];
  /** The snapshot it was forked from: its layer started as a copy of that snapshot's. */
  baseSnapshot?: string;
  /** The runsc build and platform it runs on; absent: written before engines were recorded (engines.ts). */
  engine?: RunscEngine;
  /**
   * The current run was booted with `--net-disconnect-ok` (engines.ts): a save cuts its connections.
   * Absent: booted before this was recorded, so a save must wait for them to go (checkpoint.ts).
   */
  cutsConnections?: boolean;
  /** The environment it was created with: a boot after a disk-only pause starts from it (a restore has it in the image). */
  env?: Record<string, string>;
  /** Paused keeping only its disk (disk-pause.ts): no run, no image; resume boots it. */
  stopped?: boolean;
  /**
   * runsc container of the current run: every restore starts a new one, so the
   * saved one can be deleted in the background (runsc delete waits until the
   * exited sandbox is reaped: at once under the server's reaper, seconds under some inits).
   */
  runscId: string;
}

export function readMeta(path: string): Promise<SandboxMeta | undefined> {
  return readJson<SandboxMeta>(path);
}

export function writeMeta(path: string, meta: SandboxMeta): Promise<void> {
  return writeFileAtomic(path, JSON.stringify(meta));
}

export function metaOf(spec: SandboxSpec, runscId: string): SandboxMeta {
  return {
    id: spec.id,
    templateRoot: spec.templateRoot,
    hostname: spec.hostname,
    resources: spec.resources,
    ...(spec.templateLayers?.length ? { templateLayers: spec.templateLayers } : {}),
    ...(spec.netnsPath ? { netnsPath: spec.netnsPath } : {}),
    ...(spec.mounts ? { mounts: spec.mounts } : {}),
    env: spec.env,
    runscId,
    createdAt: new Date().toISOString(),
  };
}

/** The spec a restore writes its config from (env lives in the image, not here). */
export function specOf(meta: SandboxMeta): SandboxSpec {
  return {
    id: meta.id,
    templateRoot: meta.templateRoot,
    templateLayers: meta.templateLayers,
    resources: meta.resources,
    env: {},
    hostname: meta.hostname,
    ...(meta.netnsPath ? { netnsPath: meta.netnsPath } : {}),
    ...(meta.mounts ? { mounts: meta.mounts } : {}),
  };
}
