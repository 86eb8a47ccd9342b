import type { SandboxProcesses } from './process-descriptors.ts';

/** The socket inodes of /proc/net/tcp{,6} text (every state, loopback included). */
export function tcpInodes(procNetTcp: string): Set<string> {
  const inodes = new Set<string>();
  for (const line of procNetTcp.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length >= 10 && /^\d+:$/.test(f[0]!) && f[9] !== '0') inodes.add(f[9]!);
  }
  return inodes;
}

/**
 * Processes in the sandbox that hold an epoll instance and a TCP socket: this runsc's save fails
 * on a TCP endpoint that epoll watches ("endpoint still has waiters upon save", measured with a
 * Node.js server and a Python asyncio one, loopback listeners included) and the sandbox ends.
 * epoll's fdinfo shows nothing of what it watches under gVisor, so holding both counts: event
 * loops register every socket they hold. Answers `pid (comm)` of each.
 */
export async function epollTcpHolders(processes: SandboxProcesses, inodes: Set<string>): Promise<string[]> {
  if (inodes.size === 0) return [];
  const out = await processes.descriptors();
  const byPid = new Map<string, { epoll: boolean; tcp: boolean }>();
  for (const line of out.split('\n')) {
    const m = /^\/proc\/(\d+)\/fd (.*)$/.exec(line);
    if (!m) continue;
    const p = byPid.get(m[1]!) ?? { epoll: false, tcp: false };
    if (m[2] === 'anon_inode:[eventpoll]') p.epoll = true;
    const socket = /^socket:\[(\d+)\]$/.exec(m[2]!);
    if (socket && inodes.has(socket[1]!)) p.tcp = true;
    byPid.set(m[1]!, p);
  }
  const pids = [...byPid].filter(([, p]) => p.epoll && p.tcp).map(([pid]) => pid);
  return Promise.all(pids.map((pid) => processes.name(pid)));
}
