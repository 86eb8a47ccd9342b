import type { CgroupV1 } from '../host/cgroups.ts';
import type { KeyedLock } from '../host/keyed-lock.ts';
import type { LayerStore, Logger } from '../host/layer-store.ts';
import type { AgentChannel } from './agent-channel.ts';
import type { CheckpointCompression, RunscEngine, RunscEngines, RunscPlatform } from './engines.ts';
import type { GvisorPaths } from './paths.ts';
import type { Runsc } from './runsc.ts';

export interface GvisorDriverOptions {
  dataDir: string;
  /** Static in-sandbox agent, bind-mounted read-only at /.sandpit/agent and run as PID 1. */
  agentBinary: string;
  logger?: Logger;
  /** Apparent size of the sparse btrfs image holding writable layers, checkpoints and snapshots (default 256 GiB). */
  layerStoreGiB?: number;
  /** Ready-made writable layers kept for fast creates (default 2; 0 disables). */
  layerPoolSize?: number;
  /** How long create and resume wait for the agent to connect (default 15 s). */
  readyTimeoutMs?: number;
  /** The runsc new sandboxes run on (default: the bundled build when installed, else `runsc` on PATH). */
  runsc?: string;
  /** Its platform (default systrap). */
  runscPlatform?: RunscPlatform;
  /** How checkpoints store memory, on builds that can choose (default none). */
  checkpointCompression?: CheckpointCompression;
  /** The fewest CPUs a new sandbox's engine boots on (default 1: vcpu_count), see launch.ts. */
  minEngineCpus?: number;
}

/** What the parts of the gVisor driver (lifecycle, checkpoints, snapshots) share: one per driver. */
export interface DriverState {
  readonly opts: GvisorDriverOptions;
  readonly paths: GvisorPaths;
  readonly logger: Logger;
  /** The runsc builds in use: new sandboxes get the default, the others keep the one their meta names. */
  readonly engines: RunscEngines;
  readonly layers: LayerStore;
  readonly mutex: KeyedLock;
  readonly channels: Map<string, AgentChannel>;
  /** Sandboxes being checkpointed: their channel must stay shut until the save is over. */
  readonly capturing: Set<string>;
  /** runsc containers being deleted in the background (forget), by runsc id. */
  readonly deleting: Map<string, Promise<void>>;
  cgroups: CgroupV1 | undefined;
  nofile: number;
  /** Host paths of the statx shim and of the ld.so.preload file that loads it; undefined when the shim was not built. */
  shim: { library: string; preload: string } | undefined;
}

export function cg(st: DriverState): CgroupV1 {
  if (!st.cgroups) throw new Error('gvisor driver: call init() first');
  return st.cgroups;
}

/** The runsc a sandbox (or snapshot) was created with, from its meta. */
export function runscOf(st: DriverState, meta: { engine?: RunscEngine }): Runsc {
  return st.engines.for(meta.engine);
}

/** Deletes a finished runsc container in the background; its cgroup goes with it. */
export function forget(st: DriverState, runsc: Runsc, runscId: string): void {
  const done = runsc
    .deleteForce(runscId)
    .then(() => cg(st).remove(runscId))
    .catch((err: Error) => st.logger.warn(`gvisor: deleting ${runscId}: ${err.message}`))
    .finally(() => st.deleting.delete(runscId));
  st.deleting.set(runscId, done);
}
