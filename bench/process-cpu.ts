import { readFileSync } from 'node:fs';

/**
 * CPU seconds a host process has used (user + system, /proc/<pid>/stat fields 14 and 15, in clock ticks
 * of 10 ms): unlike latency, not set by how busy the rest of the host is.
 */
export function cpuSeconds(pid: number | string): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
