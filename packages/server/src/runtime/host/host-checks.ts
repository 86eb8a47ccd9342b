import { mkdir, readFile, stat } from 'node:fs/promises';
import { listMounts } from './mounts.ts';
import { runCommand } from './run-command.ts';

/** crun refuses a hybrid cgroup layout unless hugetlb is mounted on v1 too (as scripts/bootstrap.sh does). */
export async function ensureHugetlbMounted(): Promise<void> {
  const hasV1Memory = await stat('/sys/fs/cgroup/memory').then(
    () => true,
    () => false,
  );
  if (!hasV1Memory) return;
  const mounts = await listMounts();
  if (mounts.some((m) => m.mountPoint === '/sys/fs/cgroup/hugetlb')) return;
  await mkdir('/sys/fs/cgroup/hugetlb', { recursive: true });
  await runCommand('mount', ['-t', 'cgroup', '-o', 'hugetlb', 'cgroup', '/sys/fs/cgroup/hugetlb']);
}

const DYNMODS_MOUNT = '/sys/fs/cgroup/favordynmods';

/**
 * Moving a task into a v1 cgroup waits for an RCU grace period unless
 * cgroups favor dynamic modifications, and every sandbox start moves one. The flag is
 * global, set by mounting any hierarchy with it, so an empty named hierarchy turns it on
 * (crun ignores named hierarchies it does not know). Forks and exits get slightly dearer.
 * Best effort: kernels without the option keep the slow path.
 */
export async function ensureFastCgroupMigration(): Promise<void> {
  const mounts = await listMounts();
  if (mounts.some((m) => m.fsType.startsWith('cgroup') && m.options.split(',').includes('favordynmods'))) return;
  await mkdir(DYNMODS_MOUNT, { recursive: true });
  await runCommand('mount', ['-t', 'cgroup', '-o', 'none,name=favordynmods,favordynmods', 'cgroup', DYNMODS_MOUNT]).catch(() => undefined);
}

export async function checkAvailable(): Promise<boolean | string> {
  if (process.getuid?.() !== 0) return 'the container driver needs root';
  try {
    await runCommand('crun', ['--version']);
  } catch (err) {
    return `crun is not usable: ${(err as Error).message}`;
  }
  const mounts = await listMounts();
  const v1 = mounts.filter((m) => m.fsType === 'cgroup').map((m) => m.options.split(','));
  for (const ctrl of ['freezer', 'memory', 'cpu', 'pids']) {
    if (!v1.some((opts) => opts.includes(ctrl))) return `cgroup v1 controller ${ctrl} is not mounted (cgroup v2-only hosts are not supported yet)`;
  }
  return true;
}

/** Our own hard RLIMIT_NOFILE (capped at 1M): the most a container may be given without CAP_SYS_RESOURCE. */
export async function hardNofileLimit(): Promise<number> {
  const text = await readFile('/proc/self/limits', 'utf8').catch(() => '');
  const m = text.match(/^Max open files\s+\S+\s+(\S+)/m);
  const hard = m?.[1] === 'unlimited' ? Infinity : Number(m?.[1]);
  return Number.isFinite(hard) && hard > 0 ? Math.min(hard, 1048576) : 1024;
}
