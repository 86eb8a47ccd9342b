/** IPv4 arithmetic for pools and rule checks: addresses as unsigned 32-bit numbers. */

export interface Cidr4 {
  base: number;
  prefix: number;
}

export function ipToInt(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    n = n * 256 + Number(p);
  }
  return n;
}

export const intToIp = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

const mask = (prefix: number) => (prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0);

/** An IPv4 CIDR (a bare address is a /32); undefined for anything else, IPv6 included. */
export function parseCidr4(raw: string): Cidr4 | undefined {
  const [addr, prefixText, ...rest] = raw.trim().split('/');
  if (rest.length > 0 || addr === undefined) return undefined;
  const ip = ipToInt(addr);
  if (ip === undefined) return undefined;
  const prefix = prefixText === undefined ? 32 : /^\d{1,2}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!(prefix >= 0 && prefix <= 32)) return undefined;
  return { base: (ip & mask(prefix)) >>> 0, prefix };
}

export function cidrContains(c: Cidr4, ip: number): boolean {
  return (ip & mask(c.prefix)) >>> 0 === c.base;
}

export function cidrsOverlap(a: Cidr4, b: Cidr4): boolean {
  const p = Math.min(a.prefix, b.prefix);
  return (a.base & mask(p)) >>> 0 === (b.base & mask(p)) >>> 0;
}

export const formatCidr = (c: Cidr4) => `${intToIp(c.base)}/${c.prefix}`;

/** Ranges no sandbox may ever reach, whatever its rules say (the contract's list). */
export const ALWAYS_BLOCKED = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.0/8', '169.254.0.0/16'];
/** Never routable destinations: "this network", multicast and reserved space. */
export const NEVER_ROUTED = ['0.0.0.0/8', '224.0.0.0/4', '240.0.0.0/4'];
/** The host's package mirrors and DNS live here: no pool may overlap them (they are in 10/8 or public space). */
export const HOST_RESERVED = ['203.0.113.0/24', '10.255.255.0/24'];

/**
 * The sandbox address pool, carved into /30s: slot n owns base+4n .. base+4n+3, with the host side
 * of the veth at +1 and the sandbox at +2.
 */
export class AddressPool {
  readonly cidr: Cidr4;
  readonly slots: number;

  constructor(raw: string) {
    const c = parseCidr4(raw);
    if (!c) throw new Error(`SANDPIT_NET_POOL must be an IPv4 CIDR, got '${raw}'`);
    if (c.prefix > 30) throw new Error(`SANDPIT_NET_POOL ${raw} is too small: it needs at least one /30`);
    for (const bad of [...ALWAYS_BLOCKED, ...NEVER_ROUTED, ...HOST_RESERVED]) {
      if (cidrsOverlap(c, parseCidr4(bad)!)) throw new Error(`SANDPIT_NET_POOL ${raw} overlaps ${bad}, which sandboxes must never use`);
    }
    this.cidr = c;
    this.slots = 2 ** (30 - c.prefix);
  }

  hostIp(slot: number): string {
    return intToIp(this.#at(slot) + 1);
  }

  sandboxIp(slot: number): string {
    return intToIp(this.#at(slot) + 2);
  }

  /** The slot whose sandbox side has this address, if any. */
  slotOfSandboxIp(ip: string): number | undefined {
    const n = ipToInt(ip);
    if (n === undefined || !cidrContains(this.cidr, n) || (n - this.cidr.base) % 4 !== 2) return undefined;
    return (n - this.cidr.base - 2) / 4;
  }

  #at(slot: number): number {
    if (!Number.isInteger(slot) || slot < 0 || slot >= this.slots) throw new Error(`slot ${slot} is outside the pool`);
    return this.cidr.base + slot * 4;
  }
}
