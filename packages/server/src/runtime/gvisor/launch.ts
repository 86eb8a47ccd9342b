import { lstat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { exists } from '../../optional-files.ts';
import type { SandboxSpec } from '../driver.ts';
import { cpuViewMounts, pinnedCpus } from '../host/cpu-view.ts';
import { isMountPoint } from '../host/mounts.ts';
import { ociConfig } from '../host/oci-config.ts';
import { lowerDirs, mountOverlay } from '../host/overlay.ts';
import { AgentChannel } from './agent-channel.ts';
import { cg, type DriverState, runscOf } from './driver-state.ts';
import { unpinEngine, withEngineMemory } from './engine-cgroup.ts';
import { cutsConnections } from './engines.ts';
import { provisionNet } from './netns.ts';
import { gvisorSandboxPaths, HUB_DIR } from './paths.ts';
import type { Runsc } from './runsc.ts';
import { type SandboxMeta, specOf, writeMeta } from './sandbox-meta.ts';
import { hubConfigMount, mountHubVolumes } from './volume-hub.ts';

/** Where the agent dials inside the sandbox: the bind-mounted run dir. */
const CHANNEL_IN_SANDBOX = '/run/sandpit/host.sock';
/** The statx shim (built next to the agent, see packages/agent/statx-shim.c) and the preload list naming it. */
const SHIM_IN_SANDBOX = '/.sandpit/statx-shim.so';
const SHIM_FILE = 'sandpit-statx.so';

/** Where the real sudo is mounted, and what the agent binary is mounted over to stand in for it (packages/agent/sudo.h). */
const SUDO_PATH = 'usr/bin/sudo';
const REAL_SUDO_IN_SANDBOX = '/.sandpit/sudo';
/** Preloaded into the real sudo to name its caller (packages/agent/sudo-shim.c), built next to the agent. */
const SUDO_SHIM_IN_SANDBOX = '/.sandpit/sudo-shim.so';
const SUDO_SHIM_FILE = 'sandpit-sudo.so';
/**
 * The CPUs a new sandbox's engine boots on. runsc sets the sentry's GOMAXPROCS to them: on one, the
 * sentry's own goroutines and every task share one thread, and systrap serves each system call through
 * two context switches instead of a spin on the other CPU (14x slower here; docs/drivers.md). The
 * CFS quota still holds the sandbox to vcpu_count CPUs of time, and what runs inside is shown
 * vcpu_count (the agent's affinity, and /proc/cpuinfo and /sys/devices/system/cpu/online bound over,
 * as under crun).
 */
export function engineCpusFor(st: DriverState, vcpuCount: number): number {
  return Math.max(st.opts.minEngineCpus ?? 1, vcpuCount);
}

/** What a run mounts and starts besides its spec, as recorded in its meta: a restore must have exactly what the checkpoint had. */
export interface RunFeatures {
  shim: boolean;
  sudo: boolean;
  /** Absent: vcpu_count (recorded before engines booted on more). */
  engineCpus?: number;
  /** Mounts the volume hub (volume-hub.ts), and the agent may mount. */
  hub: boolean;
}

/** The sudo shim next to the agent binary, when built. */
export async function sudoShim(st: DriverState): Promise<string | undefined> {
  const library = join(dirname(st.opts.agentBinary), SUDO_SHIM_FILE);
  return (await exists(library)) ? library : undefined;
}

/**
 * The real sudo of a sandbox's template, from the topmost layer that has it (template layers never
 * change, so every run of a sandbox finds the same file); undefined when the template has none.
 */
export async function templateSudo(spec: { templateRoot: string; templateLayers?: string[] }): Promise<string | undefined> {
  for (const layer of lowerDirs(spec)) {
    const st = await lstat(join(layer, SUDO_PATH)).catch(() => undefined);
    if (st?.isFile()) return join(layer, SUDO_PATH);
    if (st) return undefined; // an overlay whiteout or anything else: no usable sudo below it
  }
  return undefined;
}

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
export async function start(st: DriverState, id: string, runsc: Runsc, runscId: string, memoryMib: number, launch: () => Promise<void>): Promise<void> {
  const ch = channel(st, id);
  await ch.open();
  await withEngineMemory(cg(st), runscId, memoryMib * 1024 * 1024, launch);
  await unpinEngine(cg(st), runscId);
  await ch.ready(st.opts.readyTimeoutMs ?? 15_000, async () => (await runsc.state(runscId))?.status === 'running');
}

/**
 * Starts a new run of a sandbox that has none (a restore, or a boot after a disk-only pause): its config
 * with `env`, its overlay again after a host restart, its namespace's addresses back from the ended run's
 * netstack, then `launch` (runsc run or restore). A failed start removes the run and puts the meta back
 * as it was. Answers the new run's id. The caller holds the sandbox's lock.
 */
export async function startNewRun(st: DriverState, meta: SandboxMeta, env: Record<string, string>, launch: (runsc: Runsc, runscId: string) => Promise<void>): Promise<string> {
  const { id } = meta;
  const sp = gvisorSandboxPaths(st.paths, id);
  const runsc = runscOf(st, meta);
  const runscId = `${id}-${Date.now().toString(36)}`;
  await Promise.all([
    writeConfig(st, { ...specOf(meta), env }, runscId, sp.config, sp.rootfs, sp.runDir, { shim: !!meta.statxShim, sudo: !!meta.sudo, engineCpus: meta.engineCpus, hub: !!meta.volumeHub }),
    meta.volumeHub ? mountHubVolumes(sp.hub, meta.hubMounts) : undefined,
    writeMeta(sp.meta, { ...meta, runscId, stopped: undefined, cutsConnections: cutsConnections(meta.engine) }),
    // After a host restart the overlay is gone (the layer store is re-mounted by init).
    isMountPoint(sp.rootfs).then(async (m) => {
      if (!m) await mountOverlay(lowerDirs(meta), st.layers.upper(id), st.layers.work(id), sp.rootfs);
    }),
    meta.netnsPath && meta.net ? provisionNet(meta.netnsPath, meta.net) : undefined,
  ]);
  try {
    await start(st, id, runsc, runscId, meta.resources.memoryMib, () => launch(runsc, runscId));
  } catch (err) {
    await channel(st, id).close(0);
    await runsc.kill(runscId);
    await runsc.deleteForce(runscId).catch(() => undefined);
    await cg(st)
      .remove(runscId)
      .catch(() => undefined);
    await writeMeta(sp.meta, meta);
    throw err;
  }
  return runscId;
}

/** The config of a run; its cgroup is named after the runsc container, so runs never share one. */
export async function writeConfig(
  st: DriverState,
  spec: SandboxSpec,
  runscId: string,
  path: string,
  rootfs: string,
  runDir: string,
  { shim, sudo, engineCpus: recorded, hub }: RunFeatures,
): Promise<void> {
  const vcpus = spec.resources.vcpuCount;
  const engineCpus = recorded ?? vcpus;
  const config = ociConfig({ spec: { ...spec, id: runscId }, rootfs, runDir, agentBinary: st.opts.agentBinary, nofile: st.nofile, engineCpus }) as {
    process: { args: string[]; capabilities: Record<'bounding' | 'effective' | 'permitted', string[]> };
    mounts: object[];
  };
  if (hub) {
    // The sandbox's own directory holds the config; the hub is beside it.
    config.mounts.push(hubConfigMount(join(dirname(path), HUB_DIR)));
    // For the agent's MOUNT of a volume given running; every process it starts drops it (packages/agent/caps.h).
    // Inside gVisor, whose kernel is the boundary.
    for (const set of ['bounding', 'effective', 'permitted'] as const) config.process.capabilities[set].push('CAP_SYS_ADMIN');
  }
  // gVisor refuses a listening socket on a host mount, so the agent dials the host instead.
  // gVisor has no OOM killer of its own: the agent's guard kills inside before the host kills the sentry.
  config.process.args = [config.process.args[0]!, '--connect', CHANNEL_IN_SANDBOX, '--oom-guard'];
  // Whatever this host's CPUs: a restore mounts what the checkpoint had.
  const view = engineCpus > vcpus ? (pinnedCpus(runscId, vcpus) ?? Array.from({ length: vcpus }, (_, i) => i)) : undefined;
  if (view) {
    config.process.args.push('--cpus', String(view.length));
    config.mounts.push(...(await cpuViewMounts(dirname(path), view)));
  }
  // gVisor ignores set-user-ID bits: the agent starts the real sudo for its callers instead.
  if (sudo) {
    const [real, shimLibrary] = await Promise.all([templateSudo(spec), sudoShim(st)]);
    if (!real || !shimLibrary) throw new Error(`the sandbox was started with sudo, and ${real ? SUDO_SHIM_FILE : `its template's ${SUDO_PATH}`} is missing`);
    const ro = ['bind', 'ro', 'nodev'];
    config.process.args.push('--sudo', REAL_SUDO_IN_SANDBOX, SUDO_SHIM_IN_SANDBOX);
    config.mounts.push(
      { destination: `/${SUDO_PATH}`, type: 'bind', source: st.opts.agentBinary, options: ro },
      { destination: REAL_SUDO_IN_SANDBOX, type: 'bind', source: real, options: ro },
      { destination: SUDO_SHIM_IN_SANDBOX, type: 'bind', source: shimLibrary, options: ro },
    );
  }
  if (shim) {
    if (!st.shim) throw new Error(`the sandbox was started with the statx shim, which is missing (make -C packages/agent)`);
    const ro = ['bind', 'ro', 'nosuid', 'nodev'];
    config.mounts.push({ destination: SHIM_IN_SANDBOX, type: 'bind', source: st.shim.library, options: ro }, { destination: '/etc/ld.so.preload', type: 'bind', source: st.shim.preload, options: ro });
  }
  await writeFile(path, JSON.stringify(config));
}
