import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Parses a kernel CPU list such as `0-3,6`. */
function parseCpuList(text: string): number[] {
  const cpus: number[] = [];
  for (const part of text.trim().split(',').filter(Boolean)) {
    const [a, b] = part.split('-').map(Number);
    for (let c = a!; c <= (b ?? a!); c++) cpus.push(c);
  }
  return cpus;
}

let online: number[] | undefined;
function hostCpus(): number[] {
  online ??= parseCpuList(readFileSync('/sys/devices/system/cpu/online', 'utf8'));
  return online;
}

/**
 * The host CPUs a sandbox may run on: `vcpuCount` of them, starting at a place its id picks so
 * sandboxes spread over the host; undefined when it may use them all. Pinning is what makes the
 * CPU count seen inside (affinity; gVisor's own count follows its cgroup's cpuset) equal vcpu_count,
 * and the CFS quota on top keeps a sandbox at its share even when it is alone on its CPUs.
 */
export function pinnedCpus(id: string, vcpuCount: number): number[] | undefined {
  const cpus = hostCpus();
  const n = Math.ceil(vcpuCount);
  if (n >= cpus.length) return undefined;
  const start = createHash('sha256').update(id).digest().readUInt32BE(0) % cpus.length;
  return Array.from({ length: n }, (_, i) => cpus[(start + i) % cpus.length]!).sort((a, b) => a - b);
}

/**
 * For crun, whose /sys and /proc are the host's: files that show only the sandbox's CPUs, bound over
 * /sys/devices/system/cpu/online (sysconf's count: os.cpu_count(), getconf) and /proc/cpuinfo.
 */
export async function cpuViewMounts(dir: string, cpus: number[] | undefined): Promise<object[]> {
  if (!cpus) return [];
  const onlineFile = join(dir, 'cpu-online');
  const cpuinfoFile = join(dir, 'cpuinfo');
  const blocks = readFileSync('/proc/cpuinfo', 'utf8')
    .split('\n\n')
    .filter((b) => b.trim() !== '');
  const mine = cpus.map((c, i) => (blocks[c] ?? blocks[0]!).replace(/^processor\s*:\s*\d+/m, `processor\t: ${i}`));
  await Promise.all([writeFile(onlineFile, cpus.length === 1 ? '0\n' : `0-${cpus.length - 1}\n`), writeFile(cpuinfoFile, `${mine.join('\n\n')}\n\n`)]);
  const ro = ['bind', 'ro', 'nosuid', 'nodev', 'noexec'];
  return [
    { destination: '/sys/devices/system/cpu/online', type: 'bind', source: onlineFile, options: ro },
    { destination: '/proc/cpuinfo', type: 'bind', source: cpuinfoFile, options: ro },
  ];
}
