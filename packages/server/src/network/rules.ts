import type { NetworkRules } from '../store/sandboxes.ts';
import { ALWAYS_BLOCKED, type Cidr4, cidrContains, ipToInt, NEVER_ROUTED, parseCidr4 } from './addr.ts';

/** A sandbox's egress rules in the form the nft compiler, the DNS forwarder and the proxy check. */
export interface EgressPolicy {
  deny: Cidr4[];
  /** Undefined when there is no allow list (everything not denied is allowed). */
  allow?: { cidrs: Cidr4[]; domains: string[] };
}

const FIXED_BLOCKS = [...ALWAYS_BLOCKED, ...NEVER_ROUTED].map((c) => parseCidr4(c)!);

/** IPv6 entries are dropped here: sandboxes have no IPv6 egress at all. */
export function compilePolicy(rules: NetworkRules | null): EgressPolicy {
  const v4 = (list: string[] | undefined) => (list ?? []).map(parseCidr4).filter((c): c is Cidr4 => c !== undefined);
  const policy: EgressPolicy = { deny: v4(rules?.deny_out) };
  if (rules?.allow_out !== undefined) {
    const domains = rules.allow_out.filter((e) => !e.includes('/') && ipToInt(e) === undefined && !e.includes(':'));
    policy.allow = { cidrs: v4(rules.allow_out.filter((e) => !domains.includes(e))), domains };
  }
  return policy;
}

/**
 * What an address alone decides: `deny`, `allow`, or `name` when only a domain rule could allow it
 * (the proxy then needs the TLS SNI or HTTP Host). `blocked` adds ranges beyond the fixed ones
 * (the sandbox pool itself).
 */
export function ipVerdict(p: EgressPolicy, ip: string, blocked: readonly Cidr4[] = []): 'deny' | 'allow' | 'name' {
  const n = ipToInt(ip);
  if (n === undefined) return 'deny';
  if (FIXED_BLOCKS.some((c) => cidrContains(c, n)) || blocked.some((c) => cidrContains(c, n))) return 'deny';
  if (p.deny.some((c) => cidrContains(c, n))) return 'deny';
  if (!p.allow) return 'allow';
  if (p.allow.cidrs.some((c) => cidrContains(c, n))) return 'allow';
  return p.allow.domains.length > 0 ? 'name' : 'deny';
}

/** `*.example.com` matches every name below example.com, not example.com itself. */
export function domainMatches(pattern: string, host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (pattern.startsWith('*.')) return h.endsWith(pattern.slice(1)) && h.length > pattern.length - 1;
  return h === pattern;
}

export const nameAllowed = (p: EgressPolicy, host: string) => !p.allow || p.allow.domains.some((d) => domainMatches(d, host));

/**
 * Which names the platform resolver answers. The contract: under an allow list the resolver's
 * address must be allowed or nothing resolves; we also answer the names the allow list names.
 */
export function dnsAllowed(p: EgressPolicy, resolverIp: string, name: string): boolean {
  if (!p.allow) return true;
  const n = ipToInt(resolverIp)!;
  return p.allow.cidrs.some((c) => cidrContains(c, n)) || nameAllowed(p, name);
}
