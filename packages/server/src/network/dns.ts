import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { readFile } from 'node:fs/promises';
import { isIPv4 } from 'node:net';

/** The question of a DNS message, enough to apply rules to names. */
export interface DnsQuestion {
  name: string;
  type: number;
  /** Offset just past the question, where answers start. */
  end: number;
}

export const TYPE_A = 1;
export const TYPE_AAAA = 28;

function readName(msg: Buffer, start: number): { name: string; end: number } {
  const labels: string[] = [];
  let pos = start;
  let end = -1;
  for (let hops = 0; hops < 64; hops++) {
    const len = msg[pos];
    if (len === undefined) throw new Error('truncated name');
    if (len === 0) {
      if (end < 0) end = pos + 1;
      return { name: labels.join('.').toLowerCase(), end };
    }
    if ((len & 0xc0) === 0xc0) {
      if (end < 0) end = pos + 2;
      pos = ((len & 0x3f) << 8) | msg[pos + 1]!;
      continue;
    }
    labels.push(msg.toString('latin1', pos + 1, pos + 1 + len));
    pos += 1 + len;
  }
  throw new Error('name compression loop');
}

export function parseQuestion(msg: Buffer): DnsQuestion | undefined {
  try {
    if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return undefined;
    const { name, end } = readName(msg, 12);
    if (end + 4 > msg.length) return undefined;
    return { name, type: msg.readUInt16BE(end), end: end + 4 };
  } catch {
    return undefined;
  }
}

/** IPv4 addresses in the answer section of a response. */
export function answerAddresses(msg: Buffer): string[] {
  try {
    const q = parseQuestion(msg);
    if (!q) return [];
    const count = msg.readUInt16BE(6);
    const out: string[] = [];
    let pos = q.end;
    for (let i = 0; i < count; i++) {
      pos = readName(msg, pos).end;
      const type = msg.readUInt16BE(pos);
      const rdlen = msg.readUInt16BE(pos + 8);
      if (type === TYPE_A && rdlen === 4) out.push([...msg.subarray(pos + 10, pos + 14)].join('.'));
      pos += 10 + rdlen;
    }
    return out;
  } catch {
    return [];
  }
}

/** A reply to `query` with only a header and its question: REFUSED (5), or an empty NOERROR (0). */
export function emptyReply(query: Buffer, q: DnsQuestion, rcode: number): Buffer {
  const out = Buffer.from(query.subarray(0, q.end));
  // QR=1, keep opcode and RD, RA=1, rcode.
  out.writeUInt16BE(0x8000 | (query.readUInt16BE(2) & 0x7900) | 0x80 | rcode, 2);
  out.writeUInt16BE(0, 6);
  out.writeUInt16BE(0, 8);
  out.writeUInt16BE(0, 10);
  return out;
}

export interface Upstream {
  host: string;
  port: number;
}

/** `ip[:port]` entries, comma separated; or the nameservers of /etc/resolv.conf. */
export async function upstreamsFrom(raw: string | undefined): Promise<Upstream[]> {
  const list = raw
    ? raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : (await readFile('/etc/resolv.conf', 'utf8').catch(() => ''))
        .split('\n')
        .map((l) => /^\s*nameserver\s+(\S+)/.exec(l)?.[1])
        .filter((s): s is string => !!s && isIPv4(s));
  const ups = list.map((e) => {
    const [host, port] = e.split(':');
    if (!host || !isIPv4(host) || (port !== undefined && !/^\d+$/.test(port))) throw new Error(`SANDPIT_DNS_UPSTREAM: '${e}' is not ip[:port]`);
    return { host, port: port === undefined ? 53 : Number(port) };
  });
  if (ups.length === 0) throw new Error('no DNS upstream: set SANDPIT_DNS_UPSTREAM or a nameserver in /etc/resolv.conf');
  return ups;
}

/** What the forwarder needs to know about the sandbox a query came from. */
export interface DnsClient {
  allowed(name: string): boolean;
  /** Called with the IPv4 answers the sandbox received for a name, so the proxy can check SNI/Host against them. */
  resolved(name: string, ips: string[]): void;
}

interface Pending {
  client: RemoteInfo;
  id: number;
  who: DnsClient;
  name: string;
  timer: NodeJS.Timeout;
}

const TIMEOUT_MS = 4000;

/**
 * The resolver every sandbox uses (its port-53 traffic is redirected here): answers only sandbox
 * addresses, refuses names the rules do not allow, answers AAAA empty (sandboxes have no IPv6),
 * and forwards the rest to the host's resolver.
 */
export class DnsForwarder {
  readonly #upstreams: Upstream[];
  readonly #clientFor: (ip: string) => DnsClient | undefined;
  #server: Socket | undefined;
  #upstream: Socket | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = Math.floor(Math.random() * 65536);

  constructor(upstreams: Upstream[], clientFor: (ip: string) => DnsClient | undefined) {
    this.#upstreams = upstreams;
    this.#clientFor = clientFor;
  }

  async start(): Promise<number> {
    const server = createSocket('udp4');
    const upstream = createSocket('udp4');
    server.on('message', (msg, rinfo) => this.#query(msg, rinfo));
    upstream.on('message', (msg) => this.#answer(msg));
    server.on('error', () => undefined);
    upstream.on('error', () => undefined);
    await new Promise<void>((r) => server.bind(0, '0.0.0.0', r));
    await new Promise<void>((r) => upstream.bind(0, '0.0.0.0', r));
    this.#server = server;
    this.#upstream = upstream;
    return server.address().port;
  }

  #query(msg: Buffer, rinfo: RemoteInfo): void {
    const who = this.#clientFor(rinfo.address);
    const q = parseQuestion(msg);
    if (!who || !q || (msg.readUInt16BE(2) & 0x8000) !== 0) return;
    // Refused, or no AAAA: sandboxes have IPv4 only.
    const refused = !who.allowed(q.name);
    if (refused || q.type === TYPE_AAAA) {
      this.#reply(emptyReply(msg, q, refused ? 5 : 0), rinfo);
      return;
    }
    if (this.#pending.size >= 4096) return;
    let id = this.#nextId;
    while (this.#pending.has(id)) id = (id + 1) & 0xffff;
    this.#nextId = (id + 1) & 0xffff;
    const out = Buffer.from(msg);
    out.writeUInt16BE(id, 0);
    const timer = setTimeout(() => {
      this.#pending.delete(id);
      this.#reply(emptyReply(msg, q, 2), rinfo);
    }, TIMEOUT_MS);
    this.#pending.set(id, { client: rinfo, id: msg.readUInt16BE(0), who, name: q.name, timer });
    const up = this.#upstreams[id % this.#upstreams.length]!;
    this.#upstream?.send(out, up.port, up.host);
  }

  #answer(msg: Buffer): void {
    if (msg.length < 12) return;
    const p = this.#pending.get(msg.readUInt16BE(0));
    if (!p) return;
    this.#pending.delete(msg.readUInt16BE(0));
    clearTimeout(p.timer);
    p.who.resolved(p.name, answerAddresses(msg));
    const out = Buffer.from(msg);
    out.writeUInt16BE(p.id, 0);
    this.#reply(out, p.client);
  }

  #reply(msg: Buffer, to: RemoteInfo): void {
    this.#server?.send(msg, to.port, to.address);
  }

  close(): void {
    for (const p of this.#pending.values()) clearTimeout(p.timer);
    this.#pending.clear();
    this.#server?.close();
    this.#upstream?.close();
  }
}
