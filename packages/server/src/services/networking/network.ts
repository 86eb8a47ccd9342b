import { createHash } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { AddressPool, ALWAYS_BLOCKED, NEVER_ROUTED } from '../../network/addr.ts';
import { HostCa } from '../../network/ca.ts';
import { DnsForwarder, upstreamsFrom } from '../../network/dns.ts';
import { EgressProxy, type EgressSandbox } from '../../network/egress-proxy.ts';
import { addIfText, attachText, baseTableText, chainText, delIfText, detachText, hostIf, nftApply } from '../../network/nft.ts';
import { linkCounters } from '../../network/veth-counters.ts';
import { compilePolicy, dnsAllowed } from '../../network/rules.ts';
import { purgeDeadInstallations, purgeInstallation, registerInstallation, SlotManager, unregisterInstallation } from '../../network/slots.ts';
import type { PreparedNetwork, SandboxNetworkHooks } from '../../network/hooks.ts';
import type { NetworkConfig } from '../../network/network-config.ts';
import type { NetworkRules, SandboxRecord } from '../../store/sandboxes.ts';
import type { SecretsService } from './secrets.ts';

const SPARE_REFILL_DELAY_MS = 250;

/** Where the sandbox finds the egress CA, and the variables Node, Python and curl read. */
const CA_CERT_IN_SANDBOX = '/usr/local/share/ca-certificates/sandpit-egress-ca.crt';
const CA_BUNDLE_IN_SANDBOX = '/etc/ssl/certs/ca-certificates.crt';
const CA_ENV = {
  NODE_EXTRA_CA_CERTS: CA_CERT_IN_SANDBOX,
  SSL_CERT_FILE: CA_BUNDLE_IN_SANDBOX,
  REQUESTS_CA_BUNDLE: CA_BUNDLE_IN_SANDBOX,
  CURL_CA_BUNDLE: CA_BUNDLE_IN_SANDBOX,
};

interface Attached extends EgressSandbox {
  slot: number;
}

/**
 * Per-sandbox networking: a namespace and veth pair per sandbox (kept warm in a small pool),
 * one nft table for the installation with a chain per sandbox, the DNS forwarder and the
 * egress proxy that every sandbox's TCP is redirected to.
 */
export class NetworkService implements SandboxNetworkHooks {
  readonly cfg: NetworkConfig;
  readonly pool: AddressPool;
  readonly #slots: SlotManager;
  readonly #secrets: SecretsService;
  readonly #log: Logger;
  readonly #table: string;
  readonly #byId = new Map<string, Attached>();
  readonly #bySlot = new Map<number, Attached>();
  readonly #spares: number[] = [];
  readonly #bundles = new Map<string, Promise<string>>();
  #ca!: HostCa;
  /** The egress CA and the operator's extra CAs, as the sandbox sees them. */
  #trusted = '';
  #dns!: DnsForwarder;
  #proxy!: EgressProxy;
  #dnsPort = 0;
  #proxyPort = 0;
  #filling: Promise<void> | undefined;
  #closed = false;

  private constructor(cfg: NetworkConfig, secrets: SecretsService, log: Logger) {
    this.cfg = cfg;
    this.pool = new AddressPool(cfg.pool);
    this.#slots = new SlotManager(this.pool, cfg.installation);
    this.#secrets = secrets;
    this.#log = log;
    this.#table = `sandpit_${cfg.installation}`;
  }

  /** Starts the resolver and proxy, then brings the kernel in line with the live sandboxes. */
  static async start(cfg: NetworkConfig, secrets: SecretsService, live: SandboxRecord[], log: Logger): Promise<NetworkService> {
    const n = new NetworkService(cfg, secrets, log);
    await mkdir(join(cfg.dir, 'slots'), { recursive: true });
    n.#ca = await HostCa.load(join(cfg.dir, 'egress-ca'), 'Sandpit egress CA');
    const upstreams = await upstreamsFrom(cfg.dnsUpstream);
    const resolver = new Resolver({ timeout: 3000, tries: 1 });
    resolver.setServers(upstreams.map((u) => `${u.host}:${u.port}`));
    n.#dns = new DnsForwarder(upstreams, (ip) => {
      const slot = n.pool.slotOfSandboxIp(ip);
      const sb = slot === undefined ? undefined : n.#bySlot.get(slot);
      if (!sb) return undefined;
      return {
        allowed: (name) => dnsAllowed(sb.policy, n.pool.hostIp(sb.slot), name),
        resolved: (name, ips) => {
          for (const ip of ips) {
            let names = sb.resolved.get(ip);
            if (!names) sb.resolved.set(ip, (names = new Set()));
            names.add(name);
          }
        },
      };
    });
    const upstreamCa = cfg.upstreamCaFile ? [await readFile(cfg.upstreamCaFile, 'utf8')] : [];
    n.#trusted = `${[n.#ca.certPem, ...upstreamCa].map((p) => p.trimEnd()).join('\n')}\n`;
    await writeFile(n.#trustedPath(), n.#trusted, { mode: 0o644 });
    n.#proxy = new EgressProxy({
      sandboxFor: (ip) => {
        const slot = n.pool.slotOfSandboxIp(ip);
        return slot === undefined ? undefined : n.#bySlot.get(slot);
      },
      blocked: [n.pool.cidr],
      ca: n.#ca,
      upstreamCa,
      resolve: (name) => resolver.resolve4(name),
      onRelisten: (reason) => log.error({ reason }, 'network: the egress proxy listener died; listening again on its port'),
    });
    for (const inst of await purgeDeadInstallations(n.pool)) log.warn({ installation: inst }, 'network: removed the namespaces of an installation whose data dir is gone');
    await registerInstallation(cfg.installation, cfg.dataDir);
    n.#dnsPort = await n.#dns.start();
    n.#proxyPort = await n.#proxy.start();
    try {
      await n.#reconcile(live);
    } catch (err) {
      await n.close();
      throw err;
    }
    n.#fill();
    return n;
  }

  /** Sandboxes that are not failed keep their slot; every other slot of ours, and stray namespaces, go. */
  async #reconcile(live: SandboxRecord[]): Promise<void> {
    const keep = new Map(live.filter((r) => r.status !== 'failed').map((r) => [r.id, r]));
    const { ours } = await this.#slots.scan();
    const gone: number[] = [];
    for (const s of ours) {
      const rec = s.sandboxId === undefined ? undefined : keep.get(s.sandboxId);
      if (s.sandboxId === undefined) this.#spares.push(s.slot);
      else if (rec) this.#attach(rec.id, s.slot, rec.network);
      else {
        this.#log.warn({ slot: s.slot, sandbox: s.sandboxId }, 'network: removing the namespace of a sandbox that is gone');
        gone.push(s.slot);
      }
    }
    await this.#slots.destroyAll([...gone, ...(await this.#slots.orphanNamespaces(new Set(ours.map((s) => s.slot))))]);
    for (const rec of keep.values()) {
      if (!this.#byId.has(rec.id)) this.#log.error({ sandbox: rec.id }, 'network: a live sandbox has lost its namespace; it has no network until recreated');
    }
    await Promise.all(this.#spares.map((slot) => this.#writeResolvConf(slot)));
    await this.#slots.ackAtOnce([...this.#spares, ...[...this.#byId.values()].map((a) => a.slot)]);
    await nftApply(
      baseTableText(
        { table: this.#table, dnsPort: this.#dnsPort, proxyPort: this.#proxyPort, blocked: [...ALWAYS_BLOCKED, ...NEVER_ROUTED, this.cfg.pool] },
        this.#spares,
        [...this.#byId.values()].map((a) => ({ slot: a.slot, policy: a.policy })),
      ),
    );
  }

  #attach(id: string, slot: number, rules: NetworkRules | null): Attached {
    const a: Attached = {
      id,
      slot,
      policy: compilePolicy(rules),
      resolved: new Map(),
      conns: new Set(),
      token: (t) => this.#secrets.token(id, t),
      hasBindings: () => this.#secrets.hasBindings(id),
    };
    this.#byId.set(id, a);
    this.#bySlot.set(slot, a);
    return a;
  }

  #detach(a: Attached): void {
    for (const c of a.conns) c.close();
    this.#proxy.dropAgents(a);
    this.#byId.delete(a.id);
    this.#bySlot.delete(a.slot);
  }

  /** Keeps `warm` spares ready, one at a time in the background. */
  #fill(): void {
    if (this.#filling || this.#closed) return;
    this.#filling = (async () => {
      while (!this.#closed && this.#spares.length < this.cfg.warm) this.#spares.push(await this.#newSpare());
    })()
      .catch((err) => this.#log.error({ err: String(err) }, 'network: could not prepare a spare namespace'))
      .finally(() => (this.#filling = undefined));
  }

  async #newSpare(): Promise<number> {
    const taken = await this.#slots.taken();
    const slot = await this.#slots.create(taken);
    try {
      await Promise.all([this.#writeResolvConf(slot), nftApply(addIfText(this.#table, slot))]);
    } catch (err) {
      await this.#slots.destroy(slot);
      throw err;
    }
    return slot;
  }

  #writeResolvConf(slot: number): Promise<void> {
    return writeFile(this.#resolvConfPath(slot), `# Written by Sandpit: the platform resolver.\nnameserver ${this.pool.hostIp(slot)}\noptions edns0\n`, { mode: 0o644 });
  }

  #trustedPath(): string {
    return join(this.cfg.dir, 'trusted-cas.crt');
  }

  #resolvConfPath(slot: number): string {
    return join(this.cfg.dir, 'slots', `${slot}.resolv.conf`);
  }

  /** The template's CA bundle plus the egress CA, written once per template root. */
  #bundleFor(templateRoot: string): Promise<string> {
    let p = this.#bundles.get(templateRoot);
    if (!p) {
      p = (async () => {
        const file = join(this.cfg.dir, `ca-bundle-${createHash('sha256').update(templateRoot).digest('hex').slice(0, 16)}.crt`);
        const base = await readFile(join(templateRoot, CA_BUNDLE_IN_SANDBOX), 'utf8').catch(() => '');
        await writeFile(file, `${base.trimEnd()}\n${this.#trusted}`, { mode: 0o644 });
        return file;
      })();
      p.catch(() => this.#bundles.delete(templateRoot));
      this.#bundles.set(templateRoot, p);
    }
    return p;
  }

  /** `moved`: the sandbox comes from another node with its secrets bound already (their tokens are in its memory): its bindings are loaded, not made. */
  async prepare(input: { teamId: string; sandboxId: string; templateRoot: string; network: NetworkRules | null; secrets: Record<string, string>; moved?: boolean }): Promise<PreparedNetwork> {
    const secretEnv = input.moved ? await this.#secrets.adopt(input.sandboxId).then(() => ({})) : await this.#secrets.bind(input.teamId, input.sandboxId, input.secrets);
    let slot: number | undefined;
    try {
      slot = this.#spares.shift() ?? (await this.#newSpare());
      // Creating a namespace contends with the engine starting this sandbox (rtnl, RCU): refill a moment later.
      setTimeout(() => this.#fill(), SPARE_REFILL_DELAY_MS).unref();
      const a = this.#attach(input.sandboxId, slot, input.network);
      // Spares drop all traffic until attached, so the engine may start while the rules go in.
      const ready = Promise.all([nftApply(attachText(this.#table, slot, a.policy)), this.#slots.assign(slot, input.sandboxId)]).then(() => undefined);
      ready.catch(() => undefined);
      const bundle = await this.#bundleFor(input.templateRoot);
      return {
        ready,
        baseEnv: CA_ENV,
        secretEnv,
        netnsPath: this.#slots.netnsPath(slot),
        netConfig: this.#slots.netConfig(slot),
        mounts: [
          { source: this.#resolvConfPath(slot), destination: '/etc/resolv.conf' },
          { source: bundle, destination: CA_BUNDLE_IN_SANDBOX },
          { source: this.#trustedPath(), destination: CA_CERT_IN_SANDBOX },
        ],
        abort: () => this.release(input.sandboxId),
      };
    } catch (err) {
      if (slot !== undefined && !this.#bySlot.has(slot)) await this.#slots.destroy(slot);
      await this.release(input.sandboxId).catch(() => undefined);
      throw err;
    }
  }

  /** Replaces the sandbox's chain in one transaction, then cuts connections the new rules deny. */
  async update(sandboxId: string, network: NetworkRules | null): Promise<void> {
    const a = this.#byId.get(sandboxId);
    if (!a) return;
    const policy = compilePolicy(network);
    await nftApply(chainText(this.#table, a.slot, policy));
    a.policy = policy;
    a.resolved.clear();
    this.#proxy.reevaluate(a);
  }

  /** `moved`: the sandbox went on to another node, which serves its secret bindings now: they are forgotten here, not deleted. */
  async release(sandboxId: string, moved = false): Promise<void> {
    const a = this.#byId.get(sandboxId);
    if (a) {
      this.#detach(a);
      await nftApply(detachText(this.#table, a.slot) + delIfText(this.#table, a.slot)).catch((err) => this.#log.error({ sandbox: sandboxId, err: String(err) }, 'network: removing nft rules failed'));
      await this.#slots.destroy(a.slot);
      await rm(this.#resolvConfPath(a.slot), { force: true });
    }
    if (moved) this.#secrets.forget(sandboxId);
    else await this.#secrets.unbind(sandboxId);
  }

  /** Bytes through the sandbox's veth, as the sandbox sees them (the host end's rx is the sandbox's tx). */
  async traffic(sandboxId: string): Promise<{ rxBytes: number; txBytes: number } | undefined> {
    const a = this.#byId.get(sandboxId);
    const host = a && (await linkCounters(hostIf(a.slot)));
    return host && { rxBytes: host.txBytes, txBytes: host.rxBytes };
  }

  /** The address the sandbox has on its veth, where previews reach its servers. */
  /** Cuts the sandbox's connections through the egress proxy from the host side (a pause cuts the sandbox's side); answers how many. */
  cutConnections(sandboxId: string): number {
    const a = this.#byId.get(sandboxId);
    if (!a) return 0;
    const n = a.conns.size;
    for (const c of a.conns) c.close();
    return n;
  }

  sandboxAddress(sandboxId: string): string | undefined {
    const a = this.#byId.get(sandboxId);
    return a && this.pool.sandboxIp(a.slot);
  }

  /**
   * Stops the resolver and proxy. With sandboxes still running, namespaces and rules stay for the
   * next start to pick up; with none, nothing is left behind.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#dns?.close();
    this.#proxy?.close();
    await this.#filling;
    if (this.#byId.size === 0) {
      await purgeInstallation(this.pool, this.cfg.installation);
      await unregisterInstallation(this.cfg.installation);
    }
  }
}
