import { conntrackTcpTimeouts, type TrackedTcpFlow, trackedTcpFlows } from '../host/conntrack.ts';
import { hostTcpStates } from '../host/host-tcp.ts';

/** TIME_WAIT in this runsc's netstack: measured, a save failed 59 s after the sandbox closed a connection and worked at 61 s. */
export const GVISOR_TIME_WAIT_S = 60;

/** A TCP endpoint the sandbox keeps after closing a connection, which fails a save. */
export interface HiddenEndpoint {
  flow: string;
  /** When the sandbox forgets it; undefined while its close is under way (then a full TIME_WAIT may follow). */
  clearsInMs?: number;
}

/**
 * Endpoints on the sandbox's NIC that its own /proc/net/tcp does not list (no file descriptor
 * holds them any more) but that make gVisor's save fail: those of connections the sandbox closed.
 * They are read on the host. Every flow on the NIC has its other end in the host's network
 * namespace (previews dial in; egress is redirected to the proxy), so conntrack lists it:
 * - a flow in TIME_WAIT: the host's own socket tells who closed first. A host socket in TIME_WAIT
 *   closed first (the sandbox's end is gone); none means the sandbox did, and keeps TIME_WAIT
 *   until 60 s after conntrack entered it;
 * - a flow in any other state but CLOSE whose sandbox end `inside` does not list: the sandbox
 *   closed it and the close is under way (its FIN may not even have left yet).
 * A flow whose last packet predates `sinceMs` (when this netstack started) belonged to an earlier
 * sandbox on the same address and is not counted. `inside`: the sandbox's TCP endpoints as
 * `local -> remote` (openTcpEndpoints). Undefined when the host has no conntrack table to read.
 */
export async function hiddenEndpoints(addrs: ReadonlySet<string>, sinceMs: number, inside: ReadonlySet<string>): Promise<HiddenEndpoint[] | undefined> {
  const [flows, timeouts] = await Promise.all([trackedTcpFlows(addrs), conntrackTcpTimeouts()]);
  if (!flows) return undefined;
  const rule = { addrs, sinceMs, inside, now: Date.now(), timeouts };
  // The host's socket table (tens of ms on a busy host) only for a TIME_WAIT that may be the sandbox's.
  const host = flows.some((f) => f.state === 'TIME_WAIT' && closing(f, rule)) ? await hostTcpStates(addrs) : new Map<string, string>();
  return hiddenAmong(flows, host, rule);
}

/** What hiddenEndpoints decides from besides the tables: see there. `timeouts`: conntrack's per state (s). */
export interface DrainRule {
  addrs: ReadonlySet<string>;
  sinceMs: number;
  inside: ReadonlySet<string>;
  now: number;
  timeouts: Readonly<Record<string, number>>;
}

/** hiddenEndpoints' rule over conntrack's flows and the host's socket states (`local:port>remote:port` -> state). */
export function hiddenAmong(flows: TrackedTcpFlow[], host: ReadonlyMap<string, string>, rule: DrainRule): HiddenEndpoint[] {
  const hidden: HiddenEndpoint[] = [];
  for (const f of flows) {
    if (!closing(f, rule)) continue;
    const flow = `${f.orig.src}:${f.orig.sport} -> ${f.orig.dst}:${f.orig.dport}`;
    if (f.state !== 'TIME_WAIT') hidden.push({ flow });
    else {
      const { sandbox, hostEnd } = ends(f, rule.addrs);
      if (host.get(`${hostEnd}>${sandbox}`) !== 'TIME_WAIT') hidden.push({ flow, clearsInMs: clearsInMs(f, rule) });
    }
  }
  return hidden;
}

/** Whether a flow may leave the sandbox an endpoint it does not list: see hiddenEndpoints. */
function closing(f: TrackedTcpFlow, rule: DrainRule): boolean {
  if (f.state === 'CLOSE') return false;
  const full = rule.timeouts[f.state.toLowerCase().replace(/2$/, '')] ?? (f.state === 'TIME_WAIT' ? 120 : undefined);
  if (full === undefined) return false;
  // Whole seconds, rounded down: the last packet was at most this long ago.
  if (rule.now - (full - f.timeoutS - 1) * 1000 < rule.sinceMs) return false;
  if (f.state === 'TIME_WAIT') return clearsInMs(f, rule) > 0;
  return !rule.inside.has(sandboxView(f, rule.addrs));
}

/** When the sandbox's TIME_WAIT of a flow ends: GVISOR_TIME_WAIT_S after conntrack's began. */
function clearsInMs(f: TrackedTcpFlow, rule: DrainRule): number {
  return (f.timeoutS + 1 - ((rule.timeouts.time_wait ?? 120) - GVISOR_TIME_WAIT_S)) * 1000;
}

/** The flow as the sandbox lists it (`local -> remote`); it sees the address it dialled, not the redirect. */
function sandboxView(f: TrackedTcpFlow, addrs: ReadonlySet<string>): string {
  const o = f.orig;
  return addrs.has(o.src) ? `${o.src}:${o.sport} -> ${o.dst}:${o.dport}` : `${o.dst}:${o.dport} -> ${o.src}:${o.sport}`;
}

/** The sandbox's and the host's end of a flow, from the answering direction (which a redirect rewrote to the host socket). */
function ends(f: TrackedTcpFlow, addrs: ReadonlySet<string>): { sandbox: string; hostEnd: string } {
  const r = f.reply;
  return addrs.has(r.dst) ? { sandbox: `${r.dst}:${r.dport}`, hostEnd: `${r.src}:${r.sport}` } : { sandbox: `${r.src}:${r.sport}`, hostEnd: `${r.dst}:${r.dport}` };
}
