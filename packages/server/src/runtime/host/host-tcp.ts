import { readFile } from 'node:fs/promises';

/** Linux TCP states as /proc/net/tcp numbers them. */
const STATES: Record<string, string> = {
  '01': 'ESTABLISHED',
  '02': 'SYN_SENT',
  '03': 'SYN_RECV',
  '04': 'FIN_WAIT1',
  '05': 'FIN_WAIT2',
  '06': 'TIME_WAIT',
  '07': 'CLOSE',
  '08': 'CLOSE_WAIT',
  '09': 'LAST_ACK',
  '0A': 'LISTEN',
  '0B': 'CLOSING',
};

/**
 * The states of this process's network namespace's IPv4 TCP sockets whose remote end is on
 * `remotes`, by `local:port>remote:port` (dotted addresses).
 */
export async function hostTcpStates(remotes: ReadonlySet<string>): Promise<Map<string, string>> {
  return parseTcpStates(await readFile('/proc/net/tcp', 'utf8').catch(() => ''), remotes);
}

/** The states of the sockets of /proc/net/tcp text whose remote end is on `remotes`, by `local:port>remote:port`. */
export function parseTcpStates(text: string, remotes: ReadonlySet<string>): Map<string, string> {
  const states = new Map<string, string>();
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 4 || !/^\d+:$/.test(f[0]!)) continue;
    const remote = endpoint(f[2]!);
    if (!remotes.has(remote.split(':')[0]!)) continue;
    states.set(`${endpoint(f[1]!)}>${remote}`, STATES[f[3]!] ?? f[3]!);
  }
  return states;
}

/** `0100007F:1F90` -> `127.0.0.1:8080` (the address word is little-endian). */
function endpoint(hex: string): string {
  const [addr, port] = hex.split(':') as [string, string];
  const bytes = addr.match(/../g)!.map((b) => parseInt(b, 16));
  return `${bytes.reverse().join('.')}:${parseInt(port, 16)}`;
}
