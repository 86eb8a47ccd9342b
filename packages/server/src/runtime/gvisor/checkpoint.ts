import { mkdir, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { exists } from '../../optional-files.ts';
import { within } from '../../timeouts.ts';
import { CaptureEndedSandbox, CaptureRefused } from '../driver.ts';
import { isAlive, waitForExit } from '../host/pids.ts';
import { type DriverState, forget, runscOf } from './driver-state.ts';
import { keepFailedSaveLogs } from './failed-saves.ts';
import { channel, startNewRun } from './launch.ts';
import { nicListeners, type OpenTcpEndpoint, openTcpEndpoints } from './netns.ts';
import { acceptsWithin } from '../host/tcp-accept.ts';
import { refuseHeldDeletedFiles } from './deleted-files.ts';
import { epollTcpHolders, tcpInodes } from './epoll-sockets.ts';
import { type SandboxProcesses, sandboxProcesses } from './process-descriptors.ts';
import { savesEpollWatchedSockets } from './engines.ts';
import { GVISOR_TIME_WAIT_S, type HiddenEndpoint, hiddenEndpoints } from './tcp-drain.ts';
import { gvisorSandboxPaths } from './paths.ts';
import type { Runsc, RunscState } from './runsc.ts';
import { readMeta, type SandboxMeta } from './sandbox-meta.ts';

const CHANNEL_CLOSE_TIMEOUT_MS = 2000;
/** How long a saved sandbox may take to exit before it is left to the background delete. */
export const SAVED_EXIT_WAIT_MS = 15_000;
/** How long a capture waits for the sandbox's TCP endpoints to go before it refuses. */
const TCP_DRAIN_MS = 2000;
const TCP_GRACE_MS = 300;
const TCP_POLL_MS = 100;
const SURVIVAL_CHECKS = 3;
const SURVIVAL_CHECK_GAP_MS = 250;
/** An agent that does not answer a check this fast (stopped, swamped) is bypassed through runsc instead of waited on. */
const AGENT_CHECK_TIMEOUT_MS = 2000;
/** How long a restored sandbox's listeners get to accept again before the restore answers anyway. */
const RESTORED_ACCEPT_WAIT_MS = 2000;

/**
 * Checkpoints a running sandbox to its image; the sandbox ends, its memory
 * is freed. Refused (CaptureRefused) when gVisor would fail the save, since
 * this runsc ends the sandbox on a failed save. `known`: its runsc state, when the caller just read it.
 * The caller holds the sandbox's lock.
 */
export async function checkpointLocked(st: DriverState, id: string, known?: RunscState): Promise<void> {
  const sp = gvisorSandboxPaths(st.paths, id);
  const meta = await readMeta(sp.meta);
  if (!meta) throw new Error(`sandbox ${id} not found`);
  const runsc = runscOf(st, meta);
  const rs = known ?? (await liveState(st, id, runsc, meta.runscId));
  if (rs?.status !== 'running') throw new Error(`sandbox ${id} is not running`);
  // Both checks read the processes' descriptors: once for the two.
  const processes = sandboxProcesses(st.channels.get(id)?.control, (argv) => runsc.exec(meta.runscId, argv));
  if (!meta.cutsConnections) await refuseUnsavableTcp(st, id, runsc, meta, sp.meta, processes);
  await refuseHeldDeletedFiles(processes);
  st.capturing.add(id);
  const ch = channel(st, id);
  try {
    if (!(await ch.close(CHANNEL_CLOSE_TIMEOUT_MS, rs.pid))) {
      await ch.open();
      throw new CaptureRefused('a process in the sandbox keeps the agent channel open, which gVisor cannot checkpoint; retry');
    }
    await rm(sp.partial, { recursive: true, force: true });
    await mkdir(sp.partial, { recursive: true });
    try {
      await runsc.checkpoint(meta.runscId, sp.partial, sp.image, sp.checkpointPid, sp.checkpointLog);
    } catch (err) {
      await rm(sp.partial, { recursive: true, force: true });
      if (await survived(runsc, meta.runscId)) {
        // The save failed but the sandbox survived it (e.g. a just-closed connection the check could not see): keep it, refuse.
        await ch.open();
        throw new CaptureRefused(`gVisor could not checkpoint the sandbox, which keeps running; retry later (${(err as Error).message})`);
      }
      await keepFailedSaveLogs(st, id);
      throw new CaptureEndedSandbox(`${(err as Error).message} (runsc ended the sandbox)`);
    } finally {
      await rm(sp.checkpointPid, { force: true });
    }
    // runsc 20240729 answers before its saved sandbox has exited, and says it runs until then.
    await waitForExit(rs.pid, SAVED_EXIT_WAIT_MS);
    // The saved sandbox has exited: its runsc record and cgroups go in the background, the image stays.
    forget(st, runsc, meta.runscId);
  } finally {
    st.capturing.delete(id);
  }
}

/**
 * For a run booted without `--net-disconnect-ok` (Debian 12's runsc, or a run from before it was
 * passed), where a save fails on a TCP endpoint and ends the sandbox: refuses (CaptureRefused)
 * while one is open or about to be.
 */
async function refuseUnsavableTcp(st: DriverState, id: string, runsc: Runsc, meta: SandboxMeta, metaPath: string, processes: SandboxProcesses): Promise<void> {
  const tcp = meta.netnsPath ? await tcpDrained(st, id, runsc, meta, (await stat(metaPath)).mtimeMs) : await procNetTcp(st, id, runsc, meta.runscId);
  const watched = savesEpollWatchedSockets(meta.engine) ? [] : await epollTcpHolders(processes, tcpInodes(tcp));
  if (watched.length > 0) {
    throw new CaptureRefused(
      `process ${watched.slice(0, 3).join(', ')} in the sandbox watches TCP sockets with epoll (an event-loop server such as Node.js or asyncio), which this gVisor build cannot checkpoint without ending the sandbox: stop it and retry`,
    );
  }
}

/** Whether a sandbox whose save failed still runs: runsc can take a moment to end one (seen: "running" at once, gone when read again). */
async function survived(runsc: Runsc, runscId: string): Promise<boolean> {
  for (let i = 0; i < SURVIVAL_CHECKS; i++) {
    if (i > 0) await sleep(SURVIVAL_CHECK_GAP_MS);
    if ((await runsc.state(runscId))?.status !== 'running') return false;
  }
  return true;
}

/**
 * Resolves once the sandbox holds no TCP endpoint on its NIC, waiting at most TCP_DRAIN_MS for
 * those about to go (connections the platform just closed, a TIME_WAIT about to end; only
 * TCP_GRACE_MS while the rest are established and none is closing); refuses
 * (CaptureRefused, with when to retry if known) otherwise, since a failed save ends the sandbox.
 * `startedAt`: when this netstack started (its meta is written just before each start and restore).
 * Answers the sandbox's last /proc/net/tcp{,6}.
 */
async function tcpDrained(st: DriverState, id: string, runsc: Runsc, meta: SandboxMeta, startedAt: number): Promise<string> {
  const addrs = new Set(ipv4Addrs(meta));
  const started = Date.now();
  for (;;) {
    const tcp = await procNetTcp(st, id, runsc, meta.runscId);
    const open = openTcpEndpoints(tcp);
    const hidden = (addrs.size > 0 ? await hiddenEndpoints(addrs, startedAt, new Set(open.map((e) => e.flow))) : undefined) ?? [];
    if (open.length === 0 && hidden.length === 0) return tcp;
    const settling = open.some((e) => e.settling) || hidden.some((h) => h.clearsInMs === undefined);
    // An established connection goes only if a close is on its way (the platform's own, just closed): a short grace.
    const left = (settling || open.length === 0 ? TCP_DRAIN_MS : TCP_GRACE_MS) - (Date.now() - started);
    const known = Math.max(0, ...hidden.map((h) => h.clearsInMs ?? 0));
    const polling = open.length > 0 || settling;
    if (known > left || (polling && left < TCP_POLL_MS)) throw tcpRefusal(open, hidden);
    await sleep(polling ? TCP_POLL_MS : known);
  }
}

function tcpRefusal(open: OpenTcpEndpoint[], hidden: HiddenEndpoint[]): CaptureRefused {
  const list = (xs: string[]) => `${xs.slice(0, 3).join(', ')}${xs.length > 3 ? ', ...' : ''}`;
  if (open.length > 0) {
    return new CaptureRefused(`the sandbox has ${open.length} open TCP connection(s) (${list(open.map((e) => e.flow))}); gVisor cannot checkpoint network connections: close them and retry`);
  }
  const retryAfterS = Math.ceil(Math.max(...hidden.map((h) => h.clearsInMs ?? (GVISOR_TIME_WAIT_S + 1) * 1000)) / 1000);
  return new CaptureRefused(
    `the sandbox closed ${hidden.length} TCP connection(s) within the last ${GVISOR_TIME_WAIT_S} s (${list(hidden.map((h) => h.flow))}); gVisor keeps them (TIME_WAIT) and cannot checkpoint them: retry in ${retryAfterS} s`,
    retryAfterS,
  );
}

/** Restores a sandbox from `image` as a new runsc container. The caller holds the sandbox's lock. */
export async function restoreLocked(st: DriverState, id: string, image: string): Promise<void> {
  const sp = gvisorSandboxPaths(st.paths, id);
  const meta = await readMeta(sp.meta);
  if (!meta) throw new Error(`sandbox ${id} not found`);
  if (!(await exists(image))) throw new Error(`sandbox ${id} has no checkpoint to restore`);
  // The env lives in the image.
  const runscId = await startNewRun(st, meta, {}, (runsc, rid) => runsc.restore(rid, sp.dir, image, sp.log, !!meta.netnsPath));
  await listenersAccept(st, id, runscOf(st, meta), runscId, meta);
}

/** The sandbox's IPv4 addresses on its NIC, where the host reaches it. */
function ipv4Addrs(meta: SandboxMeta): string[] {
  return (meta.net?.addrs ?? []).map((a) => a.cidr.split('/')[0]!).filter((a) => a.includes('.'));
}

/**
 * Resolves once every port the restored sandbox listens on for its NIC accepts again (bounded): the agent
 * dials in before the netstack serves them all, and a caller's first request must not be refused.
 */
async function listenersAccept(st: DriverState, id: string, runsc: Runsc, runscId: string, meta: SandboxMeta): Promise<void> {
  const [host] = ipv4Addrs(meta);
  if (!host) return;
  const ports = nicListeners(await procNetTcp(st, id, runsc, runscId).catch(() => ''));
  const started = Date.now();
  const late = (await Promise.all(ports.map(async (p) => ((await acceptsWithin(host, p, RESTORED_ACCEPT_WAIT_MS)) ? undefined : p)))).filter((p) => p !== undefined);
  const took = Date.now() - started;
  if (late.length > 0) st.logger.warn(`gvisor: restored sandbox ${id} still refuses port(s) ${late.join(', ')} after ${took} ms`);
  else if (took > 100) st.logger.info(`gvisor: restored sandbox ${id} took ${took} ms to accept on port(s) ${ports.join(', ')}`);
}

/**
 * What `runsc state` (a process start) would say of a running sandbox, learnt
 * faster while its agent's control connection is up: the agent answers, and
 * runsc's state file names the sandbox process, which is alive.
 */
export async function liveState(st: DriverState, id: string, runsc: Runsc, runscId: string): Promise<RunscState | undefined> {
  const control = st.channels.get(id)?.control;
  if (control) {
    const [pid] = await Promise.all([runsc.sandboxPid(runscId), within(control.ping(), AGENT_CHECK_TIMEOUT_MS)]).catch(() => [undefined]);
    if (pid && isAlive(pid)) return { id: runscId, pid, status: 'running' };
  }
  return runsc.state(runscId);
}

/**
 * /proc/net/tcp{,6} of a running sandbox, read by the agent itself through
 * its control connection; `runsc exec` (two orders of magnitude dearer under
 * ptrace, docs/host-timings.md) only while the agent has not dialed in, e.g. just after a server restart.
 */
async function procNetTcp(st: DriverState, id: string, runsc: Runsc, runscId: string): Promise<string> {
  const control = st.channels.get(id)?.control;
  const viaRunsc = () => runsc.exec(runscId, ['cat', '/proc/net/tcp', '/proc/net/tcp6']);
  if (!control) return viaRunsc();
  const files = await within(Promise.all(['/proc/net/tcp', '/proc/net/tcp6'].map((p) => control.readSmall(p))), AGENT_CHECK_TIMEOUT_MS).catch(() => undefined);
  return files ? Buffer.concat(files).toString('utf8') : viaRunsc();
}
