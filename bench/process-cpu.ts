import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/**
 * CPU seconds a host process has used (user + system, /proc/<pid>/stat fields 14 and 15, in clock ticks
 * of 10 ms): unlike latency, not set by how busy the rest of the host is.
 */
export function cpuSeconds(pid: number | string): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds of every host process whose command line names `needle` (a sandbox's or container's id: its engine). */
export async function cpuOf(needle: string): Promise<number> {
  let seconds = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if ((await readFile(`/proc/${pid}/cmdline`, 'utf8')).includes(needle)) seconds += cpuSeconds(pid);
    } catch {
      // The process ended while the list was read.
    }
  }
  return seconds;
}

/** CPU seconds the whole host has spent busy (every CPU, /proc/stat: all but idle and iowait). */
export function hostBusySeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const n = ticks.map(Number);
  return (n.reduce((a, b) => a + b, 0) - n[3]! - n[4]!) / 100;
}
