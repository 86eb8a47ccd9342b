import type { CgroupV1 } from '../host/cgroups.ts';
import type { KeyedLock } from '../host/keyed-lock.ts';
import type { LayerStore, Logger } from '../host/layer-store.ts';
import type { AgentChannel } from './agent-channel.ts';
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
}

/** What the parts of the gVisor driver (lifecycle, checkpoints, snapshots) share: one per driver. */
export interface DriverState {
  readonly opts: GvisorDriverOptions;
  readonly paths: GvisorPaths;
  readonly logger: Logger;
  readonly runsc: Runsc;
  readonly layers: LayerStore;
  readonly mutex: KeyedLock;
  readonly channels: Map<string, AgentChannel>;
  /** Sandboxes being checkpointed: their channel must stay shut until the save is over. */
  readonly capturing: Set<string>;
  readonly deleting: Set<Promise<void>>;
  cgroups: CgroupV1 | undefined;
  nofile: number;
  /** Host paths of the statx shim and of the ld.so.preload file that loads it; undefined when the shim was not built. */
  shim: { library: string; preload: string } | undefined;
}

export function cg(st: DriverState): CgroupV1 {
  if (!st.cgroups) throw new Error('gvisor driver: call init() first');
  return st.cgroups;
}

/** Deletes a finished runsc container in the background; its cgroup goes with it. */
export function forget(st: DriverState, runscId: string): void {
  const done = st.runsc
    .deleteForce(runscId)
    .then(() => cg(st).remove(runscId))
    .catch((err: Error) => st.logger.warn(`gvisor: deleting ${runscId}: ${err.message}`))
    .finally(() => st.deleting.delete(done));
  st.deleting.add(done);
}
