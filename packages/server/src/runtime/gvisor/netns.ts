import { runCaptured, runQuiet } from '../host/posix-spawn.ts';
import type { NetConfig } from '../driver.ts';

interface IpAddr {
  ifname: string;
  addr_info?: { local: string; prefixlen: number; scope?: string }[];
}

interface IpRoute {
  dst: string;
  gateway?: string;
  dev?: string;
  protocol?: string;
}

const ip = (netnsPath: string, args: string[]) => runCaptured('nsenter', [`--net=${netnsPath}`, 'ip', ...args]);

/** Reads what runsc's netstack will take over from the namespace (it removes the addresses and routes it copies), when the caller did not say. */
export async function captureNet(netnsPath: string): Promise<NetConfig> {
  const [addrs, routes4, routes6] = await Promise.all([ip(netnsPath, ['-j', 'addr', 'show']), ip(netnsPath, ['-j', '-4', 'route', 'show']), ip(netnsPath, ['-j', '-6', 'route', 'show'])]);
  const cfg: NetConfig = { addrs: [], routes: [] };
  for (const link of JSON.parse(addrs.stdout || '[]') as IpAddr[]) {
    if (link.ifname === 'lo') continue;
    for (const a of link.addr_info ?? []) {
      if (a.scope === 'link' || a.scope === 'host') continue;
      cfg.addrs.push({ dev: link.ifname, cidr: `${a.local}/${a.prefixlen}` });
    }
  }
  for (const r of [...(JSON.parse(routes4.stdout || '[]') as IpRoute[]), ...(JSON.parse(routes6.stdout || '[]') as IpRoute[])]) {
    // Kernel routes come back with their address; link-local v6 ones are the kernel's own.
    if (r.protocol === 'kernel' || r.dst.startsWith('fe80')) continue;
    cfg.routes.push({ dst: r.dst, ...(r.gateway ? { gateway: r.gateway } : {}), ...(r.dev ? { dev: r.dev } : {}) });
  }
  return cfg;
}

/** Puts the recorded addresses and routes back, so a restored netstack can take them again. Idempotent; one `ip -batch`. */
export async function provisionNet(netnsPath: string, cfg: NetConfig): Promise<void> {
  const lines = [
    ...[...new Set(cfg.addrs.map((a) => a.dev))].map((dev) => `link set dev ${dev} up`),
    ...cfg.addrs.map((a) => `addr replace ${a.cidr} dev ${a.dev}`),
    ...cfg.routes.map((r) => ['route replace', r.dst, ...(r.gateway ? ['via', r.gateway] : []), ...(r.dev ? ['dev', r.dev] : [])].join(' ')),
  ];
  // Every word came from `ip -j` output; one with a space, quote or newline would change the batch.
  if (lines.some((l) => l.split(' ').some((w) => !/^[\w.:/@%-]+$/.test(w)))) throw new Error(`unexpected network config ${JSON.stringify(cfg)}`);
  if (lines.length > 0) await runQuiet('nsenter', [`--net=${netnsPath}`, 'ip', '-batch', '-'], `${lines.join('\n')}\n`);
}

/** A TCP endpoint in the sandbox that would make the checkpoint fail. */
export interface OpenTcpEndpoint {
  flow: string;
  /** Connecting or closing: it changes state by itself soon. */
  settling: boolean;
}

/** /proc/net/tcp states: SYN_SENT, SYN_RECV, FIN_WAIT1, FIN_WAIT2, CLOSE_WAIT, LAST_ACK, CLOSING. */
const SETTLING = new Set(['02', '03', '04', '05', '08', '09', '0B']);

/**
 * TCP endpoints that would make the checkpoint fail: anything not listening
 * and not on loopback (netstack saves loopback connections, not NIC ones).
 * Read from /proc/net/tcp{,6} in the sandbox. Connections already closed
 * (TIME_WAIT) are not listed there: tcp-drain.ts reads those on the host.
 */
export function openTcpEndpoints(procNetTcp: string): OpenTcpEndpoint[] {
  const found: OpenTcpEndpoint[] = [];
  for (const line of procNetTcp.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 4 || !/^\d+:$/.test(f[0]!)) continue;
    const [local, remote, st] = [f[1]!, f[2]!, f[3]!];
    if (st === '0A') continue;
    if (isLoopback(local) && isLoopback(remote)) continue;
    found.push({ flow: `${hexAddr(local)} -> ${hexAddr(remote)}`, settling: SETTLING.has(st) });
  }
  return found;
}

/**
 * Ports the sandbox listens on for its NIC (any address but loopback), from /proc/net/tcp{,6}:
 * what a caller outside may dial.
 */
export function nicListeners(procNetTcp: string): number[] {
  const ports = new Set<number>();
  for (const line of procNetTcp.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 4 || !/^\d+:$/.test(f[0]!) || f[3] !== '0A' || isLoopback(f[1]!)) continue;
    ports.add(parseInt(f[1]!.split(':')[1]!, 16));
  }
  return [...ports];
}

function isLoopback(hex: string): boolean {
  const addr = hex.split(':')[0]!;
  // IPv4: 127/8 is the last byte of the little-endian word; IPv6: ::1 or v4-mapped 127/8.
  if (addr.length === 8) return addr.endsWith('7F');
  return addr === '00000000000000000000000001000000' || (addr.startsWith('0000000000000000FFFF0000') && addr.endsWith('7F'));
}

function hexAddr(hex: string): string {
  const [addr, port] = hex.split(':') as [string, string];
  const p = parseInt(port, 16);
  if (addr.length !== 8) return `[v6]:${p}`;
  const b = addr
    .match(/../g)!
    .map((x) => parseInt(x, 16))
    .reverse();
  return `${b.join('.')}:${p}`;
}
