import { Agent as HttpAgent, createServer as createHttpServer, type IncomingMessage, request as httpRequest, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect as netConnect, createServer, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, rootCertificates, TLSSocket } from 'node:tls';
import type { Cidr4 } from './addr.ts';
import type { HostCa } from './ca.ts';
import { originalDst } from './original-dst.ts';
import { type EgressPolicy, ipVerdict, nameAllowed } from './rules.ts';
import { helloBytesNeeded, looksLikeHttp, looksLikeTls, parseSni } from './tls-hello.ts';
import { swapHeaders, type TokenBinding } from './token-swap.ts';

/** What the proxy knows of one sandbox; owned by the network service. */
export interface EgressSandbox {
  id: string;
  policy: EgressPolicy;
  /** IPv4 address -> names the platform resolver gave the sandbox for it. */
  resolved: Map<string, Set<string>>;
  token(token: string): TokenBinding | undefined;
  /** TLS is intercepted only for sandboxes with bound secrets; the rest is passed through after the SNI check. */
  hasBindings(): boolean;
  conns: Set<ProxiedConn>;
  agents?: { http: HttpAgent; https: HttpsAgent };
}

export interface ProxiedConn {
  dstIp: string;
  dstPort: number;
  /** Names (SNI, Host) seen on the connection, checked again when the rules change. */
  names: Set<string>;
  /** Upstream sockets serving this connection. */
  peers: Set<Duplex>;
  close(): void;
}

export interface EgressProxyDeps {
  sandboxFor(ip: string): EgressSandbox | undefined;
  /** Ranges denied beyond the fixed ones: the sandbox pool (no sandbox-to-sandbox traffic). */
  blocked: Cidr4[];
  ca: HostCa;
  /** Extra PEM CAs trusted for upstream TLS (beyond the system store). */
  upstreamCa: string[];
  /** Resolves a name through the platform's upstream DNS (to check an SNI/Host against the dialled address). */
  resolve(name: string): Promise<string[]>;
  /** Told when the listener was found dead and listens again (the port stays, so the nft redirects still hold). */
  onRelisten(reason: string): void;
}

interface Meta {
  sb: EgressSandbox;
  conn: ProxiedConn;
  dst: { ip: string; port: number };
  verdict: 'allow' | 'name';
  tls: boolean;
  sni?: string;
}

/** How often the listener is checked with a connection to itself: a dead one is back within this. */
const LISTENER_CHECK_MS = 1000;
/** How long a connection may stay silent before it is treated as a server-speaks-first protocol. */
const PEEK_MS = 300;
const MAX_HELLO = 16384 + 5;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

const hostOf = (h: string | undefined) =>
  h
    ? h
        .replace(/:\d+$/, '')
        .replace(/^\[|\]$/g, '')
        .toLowerCase()
    : undefined;

/**
 * The transparent egress proxy: every TCP connection a sandbox opens is redirected here by nft.
 * It recovers the dialled address, applies the rules (address, then TLS SNI or HTTP Host for
 * domain rules), and for HTTP (and HTTPS of sandboxes with bound secrets, through TLS
 * interception) swaps proxy tokens in request headers for the real secret values.
 */
export class EgressProxy {
  readonly #deps: EgressProxyDeps;
  readonly #server: Server;
  readonly #http = createHttpServer({ requestTimeout: 0, keepAliveTimeout: 30_000 });
  readonly #meta = new WeakMap<Duplex, Meta>();
  readonly #upstreamCa: string[];
  readonly #nameCache = new Map<string, { ips: string[]; until: number }>();
  #port = 0;
  #watch: NodeJS.Timeout | undefined;
  #relistening = false;

  constructor(deps: EgressProxyDeps) {
    this.#deps = deps;
    this.#upstreamCa = [...rootCertificates, ...deps.upstreamCa];
    this.#server = createServer({ noDelay: true }, (sock) => this.#onConnection(sock));
    this.#http.on('request', (req, res) => void this.#onRequest(req, res));
    this.#http.on('upgrade', (req, sock, head) => void this.#onUpgrade(req, sock, head));
    this.#http.on('clientError', (_err, sock) => sock.destroy());
    this.#http.on('tlsClientError', (_err: Error, sock: Socket) => sock.destroy());
  }

  async start(): Promise<number> {
    await new Promise<void>((r) => this.#server.listen(0, '0.0.0.0', r));
    this.#port = (this.#server.address() as { port: number }).port;
    // A listener can die without Node noticing (a socket destroyed from outside, `ss -K`): nothing is
    // emitted and every sandbox connection is refused. A connection to itself finds that out.
    this.#server.on('error', (err) => this.#relisten(`listener error: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
    this.#watch = setInterval(() => this.#check(), LISTENER_CHECK_MS);
    this.#watch.unref();
    return this.#port;
  }

  close(): void {
    clearInterval(this.#watch);
    this.#server.close();
  }

  #check(): void {
    if (this.#relistening) return;
    const probe = netConnect({ host: '127.0.0.1', port: this.#port });
    probe.on('connect', () => probe.destroy());
    probe.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED') this.#relisten('listener gone (connection refused)');
    });
  }

  /** Closes what is left of the listener and listens on the same port again, until that works. */
  #relisten(reason: string): void {
    if (this.#relistening || this.#watch === undefined) return;
    this.#relistening = true;
    this.#deps.onRelisten(reason);
    const attempt = () => {
      this.#server.close();
      this.#server.once('listening', done);
      this.#server.once('error', retry);
      this.#server.listen(this.#port, '0.0.0.0');
    };
    const done = () => {
      this.#server.off('error', retry);
      this.#relistening = false;
    };
    const retry = () => {
      this.#server.off('listening', done);
      setTimeout(attempt, LISTENER_CHECK_MS).unref();
    };
    attempt();
  }

  /** After a rule change: cuts every connection the new rules deny, and drops pooled upstream sockets. */
  reevaluate(sb: EgressSandbox): void {
    for (const c of sb.conns) {
      const v = ipVerdict(sb.policy, c.dstIp, this.#deps.blocked);
      if (v === 'deny' || (v === 'name' && ![...c.names].some((n) => nameAllowed(sb.policy, n)))) c.close();
    }
    this.dropAgents(sb);
  }

  dropAgents(sb: EgressSandbox): void {
    sb.agents?.http.destroy();
    sb.agents?.https.destroy();
    sb.agents = undefined;
  }

  #onConnection(sock: Socket): void {
    sock.on('error', () => undefined);
    const sb = this.#deps.sandboxFor((sock.remoteAddress ?? '').replace(/^::ffff:/, ''));
    const dst = sb && originalDst(sock);
    if (!sb || !dst) return void sock.destroy();
    const verdict = ipVerdict(sb.policy, dst.ip, this.#deps.blocked);
    if (verdict === 'deny') return void sock.resetAndDestroy();
    const peers = new Set<Duplex>();
    const conn: ProxiedConn = {
      dstIp: dst.ip,
      dstPort: dst.port,
      names: new Set(),
      peers,
      close() {
        sock.destroy();
        for (const p of peers) p.destroy();
      },
    };
    sb.conns.add(conn);
    sock.on('close', () => {
      sb.conns.delete(conn);
      for (const p of peers) p.destroy();
    });
    const meta: Meta = { sb, conn, dst, verdict, tls: false };

    let buf: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => finish(), PEEK_MS);
    const onData = (d: Buffer) => {
      buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
      if (looksLikeTls(buf) && helloBytesNeeded(buf) > 0 && buf.length < MAX_HELLO) return;
      finish();
    };
    const finish = () => {
      clearTimeout(timer);
      sock.off('data', onData);
      sock.pause();
      void this.#classify(meta, sock, buf).catch(() => sock.destroy());
    };
    sock.on('data', onData);
  }

  async #classify(m: Meta, sock: Socket, first: Buffer): Promise<void> {
    if (looksLikeTls(first)) {
      m.sni = parseSni(first);
      if (!(await this.#allowed(m, m.sni))) return void sock.resetAndDestroy();
      if (m.sni) m.conn.names.add(m.sni);
      if (m.sni && m.sb.hasBindings()) {
        sock.unshift(first);
        const tlsSock = new TLSSocket(sock, { isServer: true, secureContext: await this.#deps.ca.contextFor(m.sni), ALPNProtocols: ['http/1.1'] });
        tlsSock.on('error', () => sock.destroy());
        this.#meta.set(tlsSock, { ...m, tls: true });
        this.#http.emit('connection', tlsSock);
        return;
      }
      return this.#splice(m, sock, first);
    }
    if (first.length > 0 && looksLikeHttp(first)) {
      sock.unshift(first);
      this.#meta.set(sock, m);
      this.#http.emit('connection', sock);
      sock.resume();
      return;
    }
    // Anything else (or a server-speaks-first protocol) passes only on an address rule.
    if (m.verdict !== 'allow') return void sock.resetAndDestroy();
    this.#splice(m, sock, first);
  }

  #splice(m: Meta, sock: Socket, first: Buffer): void {
    const up = netConnect({ host: m.dst.ip, port: m.dst.port, noDelay: true });
    m.conn.peers.add(up);
    up.on('error', () => sock.destroy());
    up.on('close', () => sock.destroy());
    if (first.length > 0) up.write(first);
    sock.pipe(up);
    up.pipe(sock);
    sock.resume();
  }

  /** Whether a connection may go on to its dialled address, given the name it asked for. */
  async #allowed(m: Meta, name: string | undefined): Promise<boolean> {
    if (m.verdict === 'allow') return true;
    if (!name || !nameAllowed(m.sb.policy, name)) return false;
    if (m.sb.resolved.get(m.dst.ip)?.has(name)) return true;
    // The sandbox did not learn this address from our resolver: check the name really has it.
    const cached = this.#nameCache.get(name);
    const ips = cached && cached.until > Date.now() ? cached.ips : await this.#deps.resolve(name).catch(() => [] as string[]);
    if (!cached || cached.until <= Date.now()) this.#nameCache.set(name, { ips, until: Date.now() + 30_000 });
    return ips.includes(m.dst.ip);
  }

  /** Checks the Host of one request and swaps its tokens; a refusal answers 403 with a JSON body. */
  async #prepare(req: IncomingMessage): Promise<{ m: Meta; host: string; headers: string[] } | { status: number; code: string; message: string }> {
    const m = this.#meta.get(req.socket);
    if (!m) return { status: 502, code: 'bad_gateway', message: 'connection lost its egress context' };
    const host = hostOf(req.headers.host) ?? m.sni ?? m.dst.ip;
    if (!(await this.#allowed(m, host))) {
      return { status: 403, code: 'egress_denied', message: `egress to ${host} is not allowed by this sandbox's network rules` };
    }
    m.conn.names.add(host);
    const swapped = swapHeaders(req.rawHeaders, host, (t) => m.sb.token(t));
    if (!Array.isArray(swapped)) return { status: 403, code: swapped.code, message: swapped.message };
    return { m, host, headers: swapped };
  }

  async #onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const p = await this.#prepare(req);
    if (!('m' in p)) return refuse(res, p.status, p.code, p.message);
    const { m, host } = p;
    const agents = (m.sb.agents ??= { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) });
    const headers: Record<string, string | string[]> = {};
    for (let i = 0; i < p.headers.length; i += 2) {
      const k = p.headers[i]!;
      if (HOP_BY_HOP.has(k.toLowerCase())) continue;
      const prev = headers[k];
      headers[k] = prev === undefined ? p.headers[i + 1]! : [...(Array.isArray(prev) ? prev : [prev]), p.headers[i + 1]!];
    }
    const opts = { host: m.dst.ip, port: m.dst.port, method: req.method, path: req.url, headers, setHost: false };
    const up = m.tls ? httpsRequest({ ...opts, agent: agents.https, servername: isIpLiteral(host) ? undefined : host, ca: this.#upstreamCa }) : httpRequest({ ...opts, agent: agents.http });
    up.on('response', (upRes) => {
      const out: string[] = [];
      for (let i = 0; i < upRes.rawHeaders.length; i += 2) {
        if (!HOP_BY_HOP.has(upRes.rawHeaders[i]!.toLowerCase())) out.push(upRes.rawHeaders[i]!, upRes.rawHeaders[i + 1]!);
      }
      res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, out);
      upRes.pipe(res);
      upRes.on('error', () => res.destroy());
    });
    up.on('error', (err) => {
      if (res.headersSent) res.destroy();
      else refuse(res, 502, 'upstream_failed', `could not reach ${host}: ${(err as NodeJS.ErrnoException).code ?? err.message}`);
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  }

  async #onUpgrade(req: IncomingMessage, sock: Duplex, head: Buffer): Promise<void> {
    sock.on('error', () => undefined);
    const p = await this.#prepare(req);
    if (!('m' in p)) {
      const body = JSON.stringify({ error: { code: p.code, message: p.message } });
      sock.end(`HTTP/1.1 ${p.status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    const { m, host } = p;
    const up = m.tls ? tlsConnect({ host: m.dst.ip, port: m.dst.port, servername: isIpLiteral(host) ? undefined : host, ca: this.#upstreamCa }) : netConnect({ host: m.dst.ip, port: m.dst.port });
    m.conn.peers.add(up);
    up.on('error', () => sock.destroy());
    up.on('close', () => sock.destroy());
    sock.on('close', () => up.destroy());
    let text = `${req.method} ${req.url} HTTP/1.1\r\n`;
    for (let i = 0; i < p.headers.length; i += 2) text += `${p.headers[i]}: ${p.headers[i + 1]}\r\n`;
    up.write(`${text}\r\n`);
    if (head.length > 0) up.write(head);
    sock.pipe(up);
    up.pipe(sock);
  }
}

const isIpLiteral = (h: string) => /^[\d.]+$/.test(h) || h.includes(':');

function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify({ error: { code, message } }));
}
