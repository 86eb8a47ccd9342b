import { conntrackTimeWaitS, type TrackedTcpFlow, trackedTcpFlows } from '../host/conntrack.ts';
import { hostTcpStates } from '../host/host-tcp.ts';

/** TIME_WAIT in this runsc's netstack: measured, a save failed 59 s after the sandbox closed a connection and worked at 61 s. */
export const GVISOR_TIME_WAIT_S = 60;

/** conntrack's states between the first FIN and TIME_WAIT. */
const HALF_CLOSED = new Set(['FIN_WAIT', 'CLOSE_WAIT', 'LAST_ACK']);

/** A TCP endpoint the sandbox keeps after closing a connection, which fails a save. */
export interface HiddenEndpoint {
  flow: string;
  /** When the sandbox forgets it; undefined while the host's end has yet to close (then a full TIME_WAIT follows). */
  clearsInMs?: number;
}

/**
 * Endpoints on the sandbox's NIC that its own /proc/net/tcp does not list (they have no file
 * descriptor any more) but that make gVisor's save fail: those of connections the SANDBOX closed
 * first (FIN_WAIT2, then TIME_WAIT for 60 s). They are read on the host. Every flow on the NIC has
 * its other end in the host's network namespace (previews dial in; egress is redirected to the
 * proxy), so the host's socket for the flow tells who closed first: a host socket in TIME_WAIT
 * closed first (the sandbox's end is gone); none, with conntrack in TIME_WAIT, means the sandbox
 * did and keeps TIME_WAIT until 60 s after conntrack entered it; a host socket in CLOSE_WAIT or
 * LAST_ACK means the sandbox closed and waits for the host. A flow closed before `sinceMs` (when
 * this netstack started) belonged to an earlier sandbox on the same address and is not counted.
 * Undefined when the host has no conntrack table to read.
 */
export async function hiddenEndpoints(addrs: ReadonlySet<string>, sinceMs: number): Promise<HiddenEndpoint[] | undefined> {
  const [flows, conntrackTimeWait] = await Promise.all([trackedTcpFlows(addrs), conntrackTimeWaitS()]);
  if (!flows) return undefined;
  const rule = { addrs, sinceMs, now: Date.now(), conntrackTimeWait };
  // Live flows are the inside view's; the host's socket table (tens of ms on a busy host) only when a close is under way.
  if (!flows.some((f) => closing(f, rule))) return [];
  return hiddenAmong(flows, await hostTcpStates(addrs), rule);
}

/** What hiddenEndpoints decides from: the sandbox's addresses, when its netstack started, the time, conntrack's TIME_WAIT (s). */
export interface DrainRule {
  addrs: ReadonlySet<string>;
  sinceMs: number;
  now: number;
  conntrackTimeWait: number;
}

/** hiddenEndpoints' rule over conntrack's flows and the host's socket states (`local:port>remote:port` -> state). */
export function hiddenAmong(flows: TrackedTcpFlow[], host: ReadonlyMap<string, string>, rule: DrainRule): HiddenEndpoint[] {
  const hidden: HiddenEndpoint[] = [];
  for (const f of flows) {
    if (!closing(f, rule)) continue;
    const { sandbox, hostEnd } = ends(f, rule.addrs);
    const hostState = host.get(`${hostEnd}>${sandbox}`);
    const flow = `${f.orig.src}:${f.orig.sport} -> ${f.orig.dst}:${f.orig.dport}`;
    if (f.state === 'TIME_WAIT') {
      if (hostState !== 'TIME_WAIT') hidden.push({ flow, clearsInMs: clearsInMs(f, rule) });
    } else if (hostState === 'CLOSE_WAIT' || hostState === 'LAST_ACK') {
      hidden.push({ flow });
    }
  }
  return hidden;
}

/** Whether a flow may leave the sandbox an endpoint: half closed, or in a TIME_WAIT of this netstack that has not ended. */
function closing(f: TrackedTcpFlow, rule: DrainRule): boolean {
  if (f.state !== 'TIME_WAIT') return HALF_CLOSED.has(f.state);
  // Whole seconds, rounded down: the flow closed at most this long ago.
  const closedAt = rule.now - (rule.conntrackTimeWait - f.timeoutS - 1) * 1000;
  return clearsInMs(f, rule) > 0 && closedAt >= rule.sinceMs;
}

/** When the sandbox's TIME_WAIT of a flow ends: GVISOR_TIME_WAIT_S after conntrack's began. */
function clearsInMs(f: TrackedTcpFlow, rule: DrainRule): number {
  return (f.timeoutS + 1 - (rule.conntrackTimeWait - GVISOR_TIME_WAIT_S)) * 1000;
}

/** The sandbox's and the host's end of a flow, from the answering direction (which a redirect rewrote to the host socket). */
function ends(f: TrackedTcpFlow, addrs: ReadonlySet<string>): { sandbox: string; hostEnd: string } {
  const r = f.reply;
  return addrs.has(r.dst) ? { sandbox: `${r.dst}:${r.dport}`, hostEnd: `${r.src}:${r.sport}` } : { sandbox: `${r.src}:${r.sport}`, hostEnd: `${r.dst}:${r.dport}` };
}
