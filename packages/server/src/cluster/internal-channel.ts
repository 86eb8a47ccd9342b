import { type Stats, unwatchFile, watchFile } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import { createSecureContext, type PeerCertificate, type SecureContextOptions, Server as TlsServer, TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { Agent as Dispatcher, fetch as tlsFetch } from 'undici';
import { type MemberRole, nodeHostName } from './member-certificates.ts';

/** Files of one member's side of the mutual TLS of the internal channel (PEM). */
export interface TlsFiles {
  /** The cluster CAs it trusts (one, or two while a CA is being replaced). */
  ca: string;
  cert: string;
  key: string;
}

/** How often the files are looked at: a rotated certificate is in use this long after it is written. */
export const TLS_RELOAD_MS = 1000;

/** What servers present to their callers: any member may serve. */
const SERVING_ROLES: readonly string[] = ['api', 'node'];

/** What a connection's client certificate says, read once per connection. */
const peers = new WeakMap<TLSSocket, { role: unknown; notAfter: number }>();

type FetchInit = { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal };
/** What the internal calls read of an answer: the part `fetch` of Node and of undici share. */
export type ChannelResponse = Pick<Response, 'ok' | 'status' | 'json' | 'text'> & { body: { cancel(): Promise<void> } | null };

/**
 * The internal channel between API replicas, nodes and the operator's tools: plain HTTP signed with
 * the cluster key, or, with TLS files, also mutual TLS (every member presents a certificate of the
 * cluster CA and checks the other's). Certificates are read again when their files change, so they
 * rotate under running connections: what is connected stays, new connections use the new ones.
 */
export class InternalChannel {
  readonly #files: TlsFiles | undefined;
  readonly #log: Logger | undefined;
  #material: SecureContextOptions | undefined;
  #agent: HttpAgent;
  #dispatcher: Dispatcher | undefined;
  readonly #servers = new Set<TlsServer>();
  #reloading: Promise<void> | undefined;
  /** A file changed while a reload ran: read them all again after it. */
  #changedAgain = false;
  /** Its own listener of the files' changes: another channel of this process on the same files keeps its own. */
  #onChange: ((cur: Stats, prev: Stats) => void) | undefined;

  private constructor(files: TlsFiles | undefined, material: SecureContextOptions | undefined, log: Logger | undefined) {
    this.#files = files;
    this.#log = log;
    this.#material = material;
    this.#agent = this.#newAgent();
    this.#dispatcher = material && this.#newDispatcher(material);
  }

  /** The channel without TLS: the cluster key alone authenticates it, nothing encrypts it. */
  static plain(): InternalChannel {
    return new InternalChannel(undefined, undefined, undefined);
  }

  /** Mutual TLS from these files; rejects when they cannot be read or do not make a working pair. */
  static async tls(files: TlsFiles, log?: Logger): Promise<InternalChannel> {
    const channel = new InternalChannel(files, await readMaterial(files), log);
    const onChange = (cur: Stats, prev: Stats) => {
      if (cur.mtimeMs === prev.mtimeMs && cur.ino === prev.ino) return;
      if (channel.#reloading) {
        channel.#changedAgain = true;
        return;
      }
      const run = (): Promise<void> =>
        channel.reload().then(() => {
          if (!channel.#changedAgain) return;
          channel.#changedAgain = false;
          return run();
        });
      channel.#reloading = run().finally(() => (channel.#reloading = undefined));
    };
    channel.#onChange = onChange;
    for (const f of [files.ca, files.cert, files.key]) watchFile(f, { interval: TLS_RELOAD_MS, persistent: false }, onChange);
    return channel;
  }

  get secure(): boolean {
    return this.#files !== undefined;
  }

  /** The scheme this member's own listener serves. */
  get scheme(): 'http' | 'https' {
    return this.secure ? 'https' : 'http';
  }

  /** Kept-alive connections for the proxy (forwarding to nodes); a new one after each reload. */
  get agent(): HttpAgent {
    return this.#agent;
  }

  /** Options of an HTTPS server taking members' certificates (undefined without TLS). */
  serverOptions(): (SecureContextOptions & { requestCert: true; rejectUnauthorized: false }) | undefined {
    // The handshake takes any client (probes hold no certificate); each request checks its caller (`refusal`).
    return this.#material && { ...this.#material, requestCert: true, rejectUnauthorized: false };
  }

  /** A server of this channel: a TLS one's certificate and trust follow reloads. */
  attach(server: object): void {
    if (!(server instanceof TlsServer)) return;
    this.#servers.add(server);
    server.once('close', () => this.#servers.delete(server));
  }

  fetch(url: string | URL, init: FetchInit = {}): Promise<ChannelResponse> {
    if (!this.#dispatcher) return fetch(url, init);
    return tlsFetch(url, { ...init, dispatcher: this.#dispatcher }) as Promise<ChannelResponse>;
  }

  /**
   * How curl reaches node `nodeId` at `url` on this channel: the URL it asks for and its settings (the
   * `-K` config format). With TLS, curl checks the server's name, so it asks for the node's name on
   * the cluster's internal domain (in the node's certificate) and connects to the node's address;
   * files, not contents, so a rotation applies to the next copy.
   */
  curlTarget(url: URL, nodeId: string): { url: string; config: string[] } {
    if (!this.#files) return { url: url.href, config: [] };
    const q = (v: string) => JSON.stringify(v);
    const name = nodeHostName(nodeId);
    const port = url.port || '443';
    const named = new URL(url.href);
    named.hostname = name;
    return {
      url: named.href,
      config: [`cacert = ${q(this.#files.ca)}`, `cert = ${q(this.#files.cert)}`, `key = ${q(this.#files.key)}`, 'proto = "=https"', `connect-to = ${q(`${name}:${port}:${url.hostname}:${port}`)}`],
    };
  }

  /**
   * Why the caller on `socket` may not use the internal channel, or undefined when it may: with TLS,
   * it presented a valid certificate of the cluster CA whose role is one of `roles`.
   */
  refusal(socket: Socket, roles: readonly MemberRole[]): string | undefined {
    if (!this.secure) return undefined;
    if (!(socket instanceof TLSSocket)) return 'the internal routes are served on the internal TLS listener only (SANDPIT_INTERNAL_PORT), to callers with a certificate of the cluster CA';
    if (!socket.authorized) {
      const cert = socket.getPeerCertificate();
      const why = cert && Object.keys(cert).length > 0 ? String(socket.authorizationError) : 'no client certificate';
      return `a certificate of the cluster CA is required (${why})`;
    }
    let peer = peers.get(socket);
    if (!peer) {
      const cert = socket.getPeerCertificate();
      peer = { role: cert.subject?.OU, notAfter: Date.parse(cert.valid_to) };
      peers.set(socket, peer);
    }
    // The handshake checked the dates once; a kept-alive connection outlives them.
    if (!(peer.notAfter > Date.now())) return 'a certificate of the cluster CA is required (CERT_HAS_EXPIRED since the connection was made)';
    if (typeof peer.role !== 'string' || !(roles as readonly string[]).includes(peer.role)) return `a certificate of role ${roles.join(' or ')} is required, not '${String(peer.role)}'`;
    return undefined;
  }

  /** Reads the files again and uses them for what connects next; a broken set is logged and the last good one stays. */
  async reload(): Promise<void> {
    if (!this.#files) return;
    let material: SecureContextOptions;
    try {
      material = await readMaterial(this.#files);
    } catch (err) {
      // A certificate written before its key reads as a mismatch until the key's change is seen too.
      this.#log?.warn({ err: String(err) }, 'internal TLS: the certificate files do not make a working set; the previous ones stay in use until they do');
      return;
    }
    this.#material = material;
    for (const s of this.#servers) s.setSecureContext(this.serverOptions()!);
    const old = this.#dispatcher;
    this.#agent = this.#newAgent();
    this.#dispatcher = this.#newDispatcher(material);
    // Requests under way finish on the old connections.
    void old?.close().catch(() => undefined);
    this.#log?.info('internal TLS: certificates reloaded');
  }

  close(): void {
    if (this.#files && this.#onChange) for (const f of [this.#files.ca, this.#files.cert, this.#files.key]) unwatchFile(f, this.#onChange);
    void this.#dispatcher?.close().catch(() => undefined);
    this.#agent.destroy();
  }

  #newAgent(): HttpAgent {
    const m = this.#material;
    if (!m) return new HttpAgent({ keepAlive: true, maxSockets: 256 });
    return new HttpsAgent({ keepAlive: true, maxSockets: 256, ...m, rejectUnauthorized: true, checkServerIdentity: servingMember });
  }

  #newDispatcher(m: SecureContextOptions): Dispatcher {
    return new Dispatcher({ connect: { ...m, rejectUnauthorized: true, checkServerIdentity: servingMember } });
  }
}

/**
 * The server's identity on the internal channel: a certificate of the cluster CA (checked by the
 * handshake) whose role serves. Host names are not checked: members are reached at addresses an
 * orchestrator assigns; the internal token binds each call to the node it is for.
 */
function servingMember(_host: string, cert: PeerCertificate): Error | undefined {
  const role = cert.subject?.OU;
  return typeof role === 'string' && SERVING_ROLES.includes(role) ? undefined : new Error(`the server's certificate is not a cluster member's (role '${String(role)}')`);
}

async function readMaterial(files: TlsFiles): Promise<SecureContextOptions> {
  const [ca, cert, key] = await Promise.all([readFile(files.ca, 'utf8'), readFile(files.cert, 'utf8'), readFile(files.key, 'utf8')]);
  const material = { ca, cert, key };
  // Throws on a key that does not match its certificate, or unreadable PEM.
  createSecureContext(material);
  return material;
}
