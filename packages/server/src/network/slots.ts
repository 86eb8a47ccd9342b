import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { AddressPool } from './addr.ts';
import type { NetConfig } from '../runtime/driver.ts';
import { hostIf, run } from './nft.ts';

const NETNS_DIR = '/run/netns';
/** The host network namespace's interfaces, one directory each. */
const SYS_NET = '/sys/class/net';
const HOST_IF = /^sp(\d+)h$/;
/** One file per installation on this host, naming its data dir; on tmpfs, like the namespaces. */
const REGISTRY_DIR = '/run/sandpit/net';

/** A slot as the kernel holds it: the host-side veth's alias says who owns it. */
export interface SlotState {
  slot: number;
  /** Undefined for a warm spare. */
  sandboxId?: string;
}

/**
 * Network namespaces and veth pairs, one per slot of the address pool. The host-side veth name
 * (`sp<slot>h`) is unique on the host, so creating it claims the slot even against another
 * installation on the same machine; its alias (`sandpit:<installation>[:<sandbox>]`) records the
 * owner, so a restarted server finds its slots in the kernel itself.
 */
export class SlotManager {
  readonly pool: AddressPool;
  readonly installation: string;
  #next = 0;

  constructor(pool: AddressPool, installation: string) {
    this.pool = pool;
    this.installation = installation;
  }

  netnsName(slot: number): string {
    return `sandpit-${this.installation}-${slot}`;
  }

  netnsPath(slot: number): string {
    return `${NETNS_DIR}/${this.netnsName(slot)}`;
  }

  /**
   * Slots this installation holds, and every sp<n>h name on the host (ours or not). Read from sysfs:
   * `ip link show` dumps every link, and for each veth the kernel looks up its peer's namespace id,
   * so one dump grew with the fleet (143 ms of mostly kernel time at 2,100 sandboxes, once per spare).
   */
  async scan(): Promise<{ ours: SlotState[]; taken: Set<number> }> {
    const ifs = await hostIfs();
    // An interface deleted meanwhile reads as no alias: taken, not ours.
    const aliases = await Promise.all(ifs.map((i) => readFile(`${SYS_NET}/${i.name}/ifalias`, 'utf8').catch(() => '')));
    const ours: SlotState[] = [];
    const taken = new Set<number>();
    const prefix = `sandpit:${this.installation}`;
    for (const [i, { slot }] of ifs.entries()) {
      taken.add(slot);
      const alias = aliases[i]!.trim();
      if (alias === prefix) ours.push({ slot });
      else if (alias.startsWith(`${prefix}:`)) ours.push({ slot, sandboxId: alias.slice(prefix.length + 1) });
    }
    return { ours, taken };
  }

  /** Every slot whose sp<n>h name is taken on the host (ours or not). */
  async taken(): Promise<Set<number>> {
    return new Set((await hostIfs()).map((i) => i.slot));
  }

  /** Namespaces named for this installation whose slot has no veth any more (a crash mid-create or mid-delete). */
  async orphanNamespaces(live: Set<number>): Promise<number[]> {
    const names = await readdir(NETNS_DIR).catch(() => [] as string[]);
    const prefix = `sandpit-${this.installation}-`;
    return names
      .filter((n) => n.startsWith(prefix) && /^\d+$/.test(n.slice(prefix.length)))
      .map((n) => Number(n.slice(prefix.length)))
      .filter((s) => !live.has(s));
  }

  /** Creates a spare: namespace, veth pair, addresses, default route. Skips slots held by anyone else. */
  async create(taken: Set<number>): Promise<number> {
    for (let tries = 0; tries < this.pool.slots; tries++) {
      const slot = this.#next;
      this.#next = (this.#next + 1) % this.pool.slots;
      if (taken.has(slot)) continue;
      taken.add(slot);
      const ns = this.netnsName(slot);
      const dev = hostIf(slot);
      try {
        await run(
          'ip',
          ['-b', '-'],
          [
            `netns add ${ns}`,
            `link add ${dev} type veth peer name eth0 netns ${ns}`,
            `link set ${dev} alias sandpit:${this.installation}`,
            `addr add ${this.pool.hostIp(slot)}/30 dev ${dev}`,
            `link set ${dev} up`,
            this.#quickackRoute(slot),
            '',
          ].join('\n'),
        );
      } catch (err) {
        // Only the namespace is surely ours; deleting it takes our half-made veth pair with it.
        await run('ip', ['netns', 'del', ns]).catch(() => undefined);
        // Another installation claimed the name first: try the next slot.
        if (/File exists/.test(String(err))) continue;
        throw err;
      }
      try {
        await run(
          'ip',
          ['-n', ns, '-b', '-'],
          [`addr add ${this.pool.sandboxIp(slot)}/30 dev eth0`, 'link set lo up', 'link set eth0 up', `route add default via ${this.pool.hostIp(slot)}`, ''].join('\n'),
        );
      } catch (err) {
        await this.destroy(slot);
        throw err;
      }
      return slot;
    }
    throw new Error('the sandbox address pool is exhausted');
  }

  /**
   * The host acknowledges the sandbox's segments at once. With delayed ACKs, a server inside that
   * writes a response's headers and body apart (Nagle on, as Python's http.server does) waited
   * 40-70 ms for each ACK on the proxy's kept-alive connections.
   */
  #quickackRoute(slot: number): string {
    return `route replace ${this.pool.sandboxIp(slot)}/32 dev ${hostIf(slot)} src ${this.pool.hostIp(slot)} quickack 1`;
  }

  /** Gives slots made before the quickack route (by an earlier version) that route too. */
  async ackAtOnce(slots: number[]): Promise<void> {
    if (slots.length === 0) return;
    await run('ip', ['-b', '-'], [...slots.map((slot) => this.#quickackRoute(slot)), ''].join('\n'));
  }

  /** What `create` gave the slot's namespace. */
  netConfig(slot: number): NetConfig {
    return {
      addrs: [{ dev: 'eth0', cidr: `${this.pool.sandboxIp(slot)}/30` }],
      routes: [{ dst: 'default', gateway: this.pool.hostIp(slot), dev: 'eth0' }],
    };
  }

  /** Records the owner in the kernel, so a restart knows whose slot it is. */
  async assign(slot: number, sandboxId: string): Promise<void> {
    await run('ip', ['link', 'set', hostIf(slot), 'alias', `sandpit:${this.installation}:${sandboxId}`]);
  }

  /** Removes the veth pair and the namespace; tolerates either being gone already. */
  async destroy(slot: number): Promise<void> {
    await this.destroyAll([slot]);
  }

  /** Removes many slots in one `ip` batch (a restart after a mass delete may find thousands); -force goes on past what is gone. */
  async destroyAll(slots: number[]): Promise<void> {
    if (slots.length === 0) return;
    const commands = slots.flatMap((slot) => [`link del ${hostIf(slot)}`, `netns del ${this.netnsName(slot)}`]);
    await run('ip', ['-force', '-b', '-'], [...commands, ''].join('\n')).catch(() => undefined);
  }
}

/** The host-side veths of every installation on the host (sp<n>h), with the slot each names. */
async function hostIfs(): Promise<{ name: string; slot: number }[]> {
  return (await readdir(SYS_NET)).flatMap((name) => {
    const m = HOST_IF.exec(name);
    return m ? [{ name, slot: Number(m[1]) }] : [];
  });
}

/**
 * Removes every kernel object of an installation: veths, namespaces and its nft table. For
 * uninstalling and for tests; a running server keeps its spares and table across restarts.
 */
export async function purgeInstallation(pool: AddressPool, installation: string): Promise<void> {
  const slots = new SlotManager(pool, installation);
  const { ours } = await slots.scan();
  await slots.destroyAll(ours.map((s) => s.slot));
  await slots.destroyAll(await slots.orphanNamespaces(new Set()));
  await run('nft', ['delete', 'table', 'inet', `sandpit_${installation}`]).catch(() => undefined);
}

/** Records that this installation owns kernel objects, so a later start can clean them up if its data dir is gone. */
export async function registerInstallation(installation: string, dataDir: string): Promise<void> {
  await mkdir(REGISTRY_DIR, { recursive: true, mode: 0o700 });
  await writeFile(`${REGISTRY_DIR}/${installation}`, dataDir);
}

export async function unregisterInstallation(installation: string): Promise<void> {
  await rm(`${REGISTRY_DIR}/${installation}`, { force: true });
}

/** Purges installations whose data dir no longer exists: their sandboxes are gone with it. */
export async function purgeDeadInstallations(pool: AddressPool): Promise<string[]> {
  const purged: string[] = [];
  for (const inst of await readdir(REGISTRY_DIR).catch(() => [] as string[])) {
    const dir = await readFile(`${REGISTRY_DIR}/${inst}`, 'utf8').catch(() => '');
    if (
      dir &&
      (await stat(dir).then(
        () => true,
        () => false,
      ))
    )
      continue;
    await purgeInstallation(pool, inst);
    await unregisterInstallation(inst);
    purged.push(inst);
  }
  return purged;
}
