import { formatCidr, type Cidr4 } from './addr.ts';
import type { EgressPolicy } from './rules.ts';
import { runQuiet } from '../runtime/host/posix-spawn.ts';

/**
 * nftables text for one installation's table. Sandboxes are reached through a verdict map keyed
 * by the host side of their veth, so each sandbox's chain is replaced in one atomic transaction.
 */
export interface BaseTable {
  table: string;
  dnsPort: number;
  proxyPort: number;
  /** Ranges every sandbox is denied: the always-blocked list, unroutable space and the pool. */
  blocked: readonly string[];
}

export const chainName = (slot: number) => `sb${slot}`;
export const hostIf = (slot: number) => `sp${slot}h`;

/** The whole table, rebuilt at start from the slots that exist: spares and attached sandboxes. */
export function baseTableText(b: BaseTable, spares: number[], attached: { slot: number; policy: EgressPolicy }[]): string {
  const elems = (xs: string[]) => (xs.length > 0 ? `elements = { ${xs.join(', ')} }` : '');
  const ifs = [...spares, ...attached.map((a) => a.slot)].map(hostIf);
  const chains = attached.map((a) => chainText(b.table, a.slot, a.policy, true));
  return [
    // Creating then deleting makes the transaction work whether or not the table exists.
    `table inet ${b.table} {}`,
    `delete table inet ${b.table}`,
    `table inet ${b.table} {`,
    `  set ifs { type ifname; ${elems(ifs.map((i) => `"${i}"`))} }`,
    `  set blocked { type ipv4_addr; flags interval; ${elems([...b.blocked])} }`,
    `  map sandboxes { type ifname : verdict; ${elems(attached.map((a) => `"${hostIf(a.slot)}" : jump ${chainName(a.slot)}`))} }`,
    ...chains,
    // Runs after conntrack and before the redirect, so it sees the address the sandbox dialled.
    `  chain filter_pre {`,
    `    type filter hook prerouting priority -150; policy accept;`,
    `    iifname != @ifs accept`,
    `    meta nfproto ipv6 drop`,
    `    ct state established,related accept`,
    `    iifname vmap @sandboxes`,
    // An interface without a sandbox chain is a warm spare: nothing leaves it.
    `    drop`,
    `  }`,
    `  chain nat_pre {`,
    `    type nat hook prerouting priority dstnat; policy accept;`,
    `    iifname @ifs udp dport 53 redirect to :${b.dnsPort}`,
    `    iifname @ifs meta l4proto tcp redirect to :${b.proxyPort}`,
    `  }`,
    `  chain input {`,
    `    type filter hook input priority filter; policy accept;`,
    `    iifname != @ifs accept`,
    `    ct state established,related accept`,
    `    ct status dnat udp dport ${b.dnsPort} accept`,
    `    ct status dnat tcp dport ${b.proxyPort} accept`,
    `    drop`,
    `  }`,
    `  chain forward {`,
    `    type filter hook forward priority filter; policy accept;`,
    `    iifname @ifs drop`,
    `    oifname @ifs drop`,
    `  }`,
    `}`,
    '',
  ].join('\n');
}

/** The rules of one sandbox's chain, in order. */
export function sandboxRules(p: EgressPolicy): string[] {
  const set = (cs: Cidr4[]) => `{ ${cs.map(formatCidr).join(', ')} }`;
  const rules = [
    // Every DNS query goes to the platform forwarder, which applies the rules to names.
    'udp dport 53 accept',
    'ip daddr @blocked drop',
    // The host's own addresses: its API, database and anything else listening on it.
    'fib daddr type local drop',
  ];
  if (p.deny.length > 0) rules.push(`ip daddr ${set(p.deny)} drop`);
  if (p.allow) {
    if (p.allow.cidrs.length > 0) rules.push(`ip daddr ${set(p.allow.cidrs)} accept`);
    // Domain rules are decided by the proxy from the TLS SNI or HTTP Host.
    if (p.allow.domains.length > 0) rules.push('meta l4proto tcp accept');
    rules.push('drop');
  } else {
    rules.push('accept');
  }
  return rules;
}

export function chainText(table: string, slot: number, p: EgressPolicy, inTable = false): string {
  const name = chainName(slot);
  const body = sandboxRules(p)
    .map((r) => `    ${r}`)
    .join('\n');
  return inTable
    ? `  chain ${name} {\n${body}\n  }`
    : `add chain inet ${table} ${name}\nflush chain inet ${table} ${name}\n${sandboxRules(p)
        .map((r) => `add rule inet ${table} ${name} ${r}`)
        .join('\n')}\n`;
}

/** Attaches a sandbox: its chain, then the map entry that sends its interface there. */
export function attachText(table: string, slot: number, p: EgressPolicy): string {
  return `${chainText(table, slot, p)}add element inet ${table} sandboxes { "${hostIf(slot)}" : jump ${chainName(slot)} }\n`;
}

export function detachText(table: string, slot: number): string {
  return `delete element inet ${table} sandboxes { "${hostIf(slot)}" }\ndelete chain inet ${table} ${chainName(slot)}\n`;
}

export const addIfText = (table: string, slot: number) => `add element inet ${table} ifs { "${hostIf(slot)}" }\n`;
export const delIfText = (table: string, slot: number) => `delete element inet ${table} ifs { "${hostIf(slot)}" }\n`;

/** Runs one nft transaction from text on stdin: all of it applies or none. */
export function nftApply(text: string): Promise<void> {
  return run('nft', ['-f', '-'], text);
}

/** Network commands run on the hot path of a create: spawned without forking the server. */
export function run(cmd: string, args: string[], stdin?: string): Promise<void> {
  return runQuiet(cmd, args, stdin);
}
