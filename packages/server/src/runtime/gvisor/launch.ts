import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { exists } from '../../optional-files.ts';
import type { SandboxSpec } from '../driver.ts';
import { ociConfig } from '../host/oci-config.ts';
import { AgentChannel } from './agent-channel.ts';
import { cg, type DriverState } from './driver-state.ts';
import { raiseEngineMemory, unpinEngine } from './engine-cgroup.ts';
import { gvisorSandboxPaths } from './paths.ts';
import type { Runsc } from './runsc.ts';

/** Where the agent dials inside the sandbox: the bind-mounted run dir. */
const CHANNEL_IN_SANDBOX = '/run/sandpit/host.sock';
/** The statx shim (built next to the agent, see packages/agent/statx-shim.c) and the preload list naming it. */
const SHIM_IN_SANDBOX = '/.sandpit/statx-shim.so';
const SHIM_FILE = 'sandpit-statx.so';

/** Finds the statx shim next to the agent and writes the preload list naming it. */
export async function prepareShim(st: DriverState): Promise<void> {
  const library = join(dirname(st.opts.agentBinary), SHIM_FILE);
  if (await exists(library)) {
    await writeFile(st.paths.preloadList, `${SHIM_IN_SANDBOX}\n`, { mode: 0o644 });
    st.shim = { library, preload: st.paths.preloadList };
  } else st.logger.warn(`gvisor: ${library} is missing (make -C packages/agent): \`ls -l\` and \`stat\` will fail in sandboxes`);
}

export function channel(st: DriverState, id: string): AgentChannel {
  let ch = st.channels.get(id);
  if (!ch) {
    ch = new AgentChannel(gvisorSandboxPaths(st.paths, id).channel);
    st.channels.set(id, ch);
  }
  return ch;
}

/** Opens the channel, runs runsc (run or restore), and waits for the agent to dial in. */
export async function start(st: DriverState, id: string, runsc: Runsc, runscId: string, launch: () => Promise<void>): Promise<void> {
  const ch = channel(st, id);
  await ch.open();
  await launch();
  await Promise.all([raiseEngineMemory(cg(st), runscId), unpinEngine(cg(st), runscId)]);
  await ch.ready(st.opts.readyTimeoutMs ?? 15_000, async () => (await runsc.state(runscId))?.status === 'running');
}

/** The config of a run; its cgroup is named after the runsc container, so runs never share one. */
export async function writeConfig(st: DriverState, spec: SandboxSpec, runscId: string, path: string, rootfs: string, runDir: string, shim: boolean): Promise<void> {
  const config = ociConfig({ spec: { ...spec, id: runscId }, rootfs, runDir, agentBinary: st.opts.agentBinary, nofile: st.nofile }) as {
    process: { args: string[] };
    mounts: object[];
  };
  // gVisor refuses a listening socket on a host mount, so the agent dials the host instead.
  // gVisor has no OOM killer of its own: the agent's guard kills inside before the host kills the sentry.
  config.process.args = [config.process.args[0]!, '--connect', CHANNEL_IN_SANDBOX, '--oom-guard'];
  if (shim) {
    if (!st.shim) throw new Error(`the sandbox was started with the statx shim, which is missing (make -C packages/agent)`);
    const ro = ['bind', 'ro', 'nosuid', 'nodev'];
    config.mounts.push({ destination: SHIM_IN_SANDBOX, type: 'bind', source: st.shim.library, options: ro }, { destination: '/etc/ld.so.preload', type: 'bind', source: st.shim.preload, options: ro });
  }
  await writeFile(path, JSON.stringify(config));
}
