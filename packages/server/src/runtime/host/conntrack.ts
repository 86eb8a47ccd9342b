import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One direction of a tracked flow. */
export interface FlowTuple {
  src: string;
  dst: string;
  sport: number;
  dport: number;
}

/** A TCP flow in the connection tracking table of the host's network namespace. */
export interface TrackedTcpFlow {
  /** conntrack's TCP state: ESTABLISHED, FIN_WAIT, CLOSE_WAIT, LAST_ACK, TIME_WAIT, CLOSE, ... */
  state: string;
  /** Seconds until conntrack forgets the flow (whole seconds, rounded down). */
  timeoutS: number;
  orig: FlowTuple;
  /** The answering direction: after a redirect its source is the host socket that took the flow. */
  reply: FlowTuple;
}

const TABLE = '/proc/net/nf_conntrack';
const SETTINGS = '/proc/sys/net/netfilter';
const TIMEOUT_PREFIX = 'nf_conntrack_tcp_timeout_';

/**
 * The IPv4 TCP flows conntrack holds with one end on `addrs`. Undefined when the host has no
 * conntrack table to read (module not loaded, or built without its /proc file).
 */
export async function trackedTcpFlows(addrs: ReadonlySet<string>): Promise<TrackedTcpFlow[] | undefined> {
  const text = await readFile(TABLE, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : parseTrackedTcpFlows(text, addrs);
}

/** The IPv4 TCP flows of /proc/net/nf_conntrack text with one end on `addrs`. */
export function parseTrackedTcpFlows(text: string, addrs: ReadonlySet<string>): TrackedTcpFlow[] {
  const flows: TrackedTcpFlow[] = [];
  for (const line of text.split('\n')) {
    // ipv4 2 tcp 6 <timeout> <state> src= dst= sport= dport= [flags] src= dst= sport= dport= ...
    const f = line.split(/\s+/);
    if (f[0] !== 'ipv4' || f[2] !== 'tcp') continue;
    const kv = f.filter((w) => w.includes('=')).map((w) => w.split('=') as [string, string]);
    const at = (i: number, key: string) => kv.filter(([k]) => k === key)[i]?.[1] ?? '';
    const tuple = (i: number): FlowTuple => ({ src: at(i, 'src'), dst: at(i, 'dst'), sport: Number(at(i, 'sport')), dport: Number(at(i, 'dport')) });
    const orig = tuple(0);
    if (!addrs.has(orig.src) && !addrs.has(orig.dst)) continue;
    flows.push({ state: f[5]!, timeoutS: Number(f[4]), orig, reply: tuple(1) });
  }
  return flows;
}

/** How long conntrack keeps a TCP flow after its last packet, by state (`time_wait`: 120 s, `established`: 5 days, ...). Read once. */
export function conntrackTcpTimeouts(): Promise<Record<string, number>> {
  timeouts ??= readTimeouts();
  return timeouts;
}

let timeouts: Promise<Record<string, number>> | undefined;

async function readTimeouts(): Promise<Record<string, number>> {
  const names = await readdir(SETTINGS).catch(() => [] as string[]);
  const out: Record<string, number> = {};
  await Promise.all(
    names
      .filter((n) => n.startsWith(TIMEOUT_PREFIX))
      .map(async (n) => {
        const v = Number((await readFile(join(SETTINGS, n), 'utf8').catch(() => '')).trim());
        if (v > 0) out[n.slice(TIMEOUT_PREFIX.length)] = v;
      }),
  );
  return out;
}
