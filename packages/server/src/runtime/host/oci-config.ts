import type { SandboxSpec } from '../driver.ts';
import { CGROUP_PARENT } from './cgroups.ts';
import { pinnedCpus } from './cpu-view.ts';
import { sandboxIdMappings } from './idmap.ts';

export const AGENT_PATH = '/.sandpit/agent';
export const AGENT_SOCKET = '/run/sandpit/agent.sock';
export const PIDS_LIMIT = 4096;
const CPU_PERIOD_US = 100_000;

/** Docker's default capability set: enough for the agent to switch to `user`, not enough to escape. */
const CAPS = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FSETID',
  'CAP_FOWNER',
  'CAP_MKNOD',
  'CAP_NET_RAW',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETFCAP',
  'CAP_SETPCAP',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_CHROOT',
  'CAP_KILL',
  'CAP_AUDIT_WRITE',
];

const DEFAULT_ENV: Record<string, string> = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  LANG: 'C.UTF-8',
  HOME: '/root',
};

export interface ConfigInput {
  spec: SandboxSpec;
  rootfs: string;
  runDir: string;
  agentBinary: string;
  /** RLIMIT_NOFILE for the sandbox: crun cannot raise it above the host's own hard limit. */
  nofile: number;
  /** Run in a user namespace: sandbox ids 0..65535 are host ids `idBase`.. (crun; gVisor has its own kernel). */
  idBase?: number;
  /** A sysfs mounted for the sandbox's network namespace, bound at /sys instead of mounting one. */
  sysfs?: string;
  /** How many CPUs the engine is pinned to while it boots, when not `vcpu_count` (gVisor sizes its own threads by them). */
  engineCpus?: number;
}

/** The OCI runtime config (config.json) that crun runs a sandbox from. */
export function ociConfig({ spec, rootfs, runDir, agentBinary, nofile, idBase, sysfs, engineCpus }: ConfigInput): object {
  const env = { ...DEFAULT_ENV, HOSTNAME: spec.hostname, ...spec.env };
  const memoryBytes = spec.resources.memoryMib * 1024 * 1024;
  const cpus = pinnedCpus(spec.id, engineCpus ?? spec.resources.vcpuCount);
  const shmMib = Math.max(64, Math.floor(spec.resources.memoryMib / 2));
  const noexec = ['nosuid', 'noexec', 'nodev'];
  return {
    ociVersion: '1.0.2',
    process: {
      terminal: false,
      user: { uid: 0, gid: 0 },
      args: [AGENT_PATH, '--listen', AGENT_SOCKET],
      env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      cwd: '/',
      // Copies: an engine adds to a run's sets (gVisor's agent), which must reach neither its other sets nor later runs.
      capabilities: { bounding: [...CAPS], effective: [...CAPS], permitted: [...CAPS], inheritable: [], ambient: [] },
      rlimits: [{ type: 'RLIMIT_NOFILE', hard: nofile, soft: nofile }],
      // Off so that `sudo` works for the agent's user, as in a Docker container.
      noNewPrivileges: false,
    },
    root: { path: rootfs, readonly: false },
    hostname: spec.hostname,
    mounts: [
      { destination: '/proc', type: 'proc', source: 'proc', options: ['nosuid', 'noexec', 'nodev'] },
      { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
      { destination: '/dev/pts', type: 'devpts', source: 'devpts', options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'] },
      { destination: '/dev/shm', type: 'tmpfs', source: 'shm', options: [...noexec, 'mode=1777', `size=${shmMib}m`] },
      { destination: '/dev/mqueue', type: 'mqueue', source: 'mqueue', options: noexec },
      sysfs ? { destination: '/sys', type: 'bind', source: sysfs, options: ['bind', ...noexec, 'ro'] } : { destination: '/sys', type: 'sysfs', source: 'sysfs', options: [...noexec, 'ro'] },
      { destination: '/sys/fs/cgroup', type: 'cgroup', source: 'cgroup', options: [...noexec, 'relatime', 'ro'] },
      { destination: '/run/sandpit', type: 'bind', source: runDir, options: ['bind', 'rw', 'nosuid', 'nodev', 'noexec'] },
      { destination: AGENT_PATH, type: 'bind', source: agentBinary, options: ['bind', 'ro', 'nosuid', 'nodev'] },
      // Under crun (idBase) the driver binds volumes itself, idmapped (volume-binds.ts); gVisor's gofer serves them.
      ...(spec.mounts ?? [])
        .filter((m) => !(m.volume && idBase !== undefined))
        .map((m) => ({ destination: m.destination, type: 'bind', source: m.source, options: ['bind', m.volume && !m.volume.readOnly ? 'rw' : 'ro', 'nosuid', 'nodev'] })),
    ],
    linux: {
      cgroupsPath: `/${CGROUP_PARENT}/${spec.id}`,
      resources: {
        devices: [{ allow: false, access: 'rwm' }],
        memory: { limit: memoryBytes },
        cpu: { quota: Math.round(spec.resources.vcpuCount * CPU_PERIOD_US), period: CPU_PERIOD_US, ...(cpus ? { cpus: cpus.join(',') } : {}) },
        pids: { limit: PIDS_LIMIT },
      },
      ...(idBase === undefined ? {} : { uidMappings: sandboxIdMappings(idBase), gidMappings: sandboxIdMappings(idBase) }),
      namespaces: [
        ...(idBase === undefined ? [] : [{ type: 'user' }]),
        { type: 'pid' },
        { type: 'ipc' },
        { type: 'uts' },
        { type: 'mount' },
        { type: 'cgroup' },
        spec.netnsPath ? { type: 'network', path: spec.netnsPath } : { type: 'network' },
      ],
      maskedPaths: ['/proc/acpi', '/proc/asound', '/proc/kcore', '/proc/keys', '/proc/latency_stats', '/proc/timer_list', '/proc/timer_stats', '/proc/sched_debug', '/sys/firmware', '/proc/scsi'],
      readonlyPaths: ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'],
    },
  };
}
