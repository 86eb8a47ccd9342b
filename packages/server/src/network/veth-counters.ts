import { readFile } from 'node:fs/promises';

export interface LinkCounters {
  rxBytes: number;
  txBytes: number;
}

/** Byte counters of a host network interface, from sysfs (no process spawned); undefined when it is gone. */
export async function linkCounters(ifname: string): Promise<LinkCounters | undefined> {
  const read = (name: string) => readFile(`/sys/class/net/${ifname}/statistics/${name}`, 'utf8').then((t) => Number(t.trim()));
  try {
    const [rxBytes, txBytes] = await Promise.all([read('rx_bytes'), read('tx_bytes')]);
    return { rxBytes, txBytes };
  } catch {
    return undefined;
  }
}
