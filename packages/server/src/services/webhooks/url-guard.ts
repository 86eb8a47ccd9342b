import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { badRequest } from '../../errors.ts';

/**
 * Where webhooks may not point: loopback, link-local (cloud metadata), private, shared (CGNAT, where
 * sandbox and cluster addresses live), multicast and reserved ranges, IPv4-mapped IPv6, and the
 * platform's own sandbox pool. `SANDPIT_WEBHOOK_ALLOW_HOSTS` lists `host:port`s exempted (tests,
 * private receivers an operator trusts).
 */
const V4 = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.168.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4'];
const V6 = ['::/128', '::1/128', '::ffff:0:0/96', '64:ff9b::/96', '100::/64', 'fc00::/7', 'fe80::/10', 'ff00::/8'];

export class UrlGuard {
  readonly #blocked = new BlockList();
  readonly #allowed: Set<string>;

  /** `platformRanges`: CIDRs of the platform (its sandbox pool), refused as well. */
  constructor(allowHosts: string[], platformRanges: string[] = []) {
    this.#allowed = new Set(allowHosts.map((h) => h.toLowerCase()));
    for (const cidr of [...V4, ...platformRanges]) {
      const [net, bits] = cidr.split('/');
      this.#blocked.addSubnet(net!, Number(bits), isIP(net!) === 6 ? 'ipv6' : 'ipv4');
    }
    for (const cidr of V6) {
      const [net, bits] = cidr.split('/');
      this.#blocked.addSubnet(net!, Number(bits), 'ipv6');
    }
  }

  /** Parses and checks a webhook URL as given to the API: 400 when it may not be used. */
  async check(raw: string): Promise<URL> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw badRequest('url is not a valid absolute URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest('url must be http:// or https://');
    if (url.username || url.password) throw badRequest('url must not carry credentials (sign with the secret instead)');
    if (!this.allowed(url)) {
      const refused = await this.refusal(url.hostname).catch((err: Error) => `its host does not resolve (${(err as NodeJS.ErrnoException).code ?? err.message})`);
      if (refused) throw badRequest(`url may not point at ${refused}; list its host:port in SANDPIT_WEBHOOK_ALLOW_HOSTS to allow a private receiver`);
    }
    return url;
  }

  /** Whether the URL's `host:port` is exempted. */
  allowed(url: URL): boolean {
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    return this.#allowed.has(`${url.hostname.replace(/^\[|\]$/g, '').toLowerCase()}:${port}`) || this.#allowed.has(`${url.hostname.toLowerCase()}:${port}`);
  }

  /** What a host name or address is refused as, or undefined when every address it resolves to may be used. */
  async refusal(hostname: string): Promise<string | undefined> {
    const host = hostname.replace(/^\[|\]$/g, '');
    const addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    for (const a of addresses) if (this.#blocked.check(a, isIP(a) === 6 ? 'ipv6' : 'ipv4')) return `a loopback, link-local, private or platform address (${a})`;
    return undefined;
  }

  /**
   * The address to connect to for a delivery, checked now (a name may resolve elsewhere than when it
   * was registered) and then pinned, so the connection goes where the check looked.
   */
  async resolve(url: URL): Promise<{ address: string; family: number }> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const family = isIP(host);
    const found = family ? { address: host, family } : await lookup(host, { verbatim: true });
    if (!this.allowed(url) && this.#blocked.check(found.address, found.family === 6 ? 'ipv6' : 'ipv4')) {
      throw new Error(`refused: ${url.hostname} resolves to a loopback, link-local, private or platform address`);
    }
    return found;
  }
}
