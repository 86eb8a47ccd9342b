import { readdir, readFile, rmdir, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { listMounts } from './mounts.ts';

/** How long a freeze may stay FREEZING before it is thawed and tried again. */
const FREEZE_RETRY_MS = 100;

/** Every sandbox's cgroup sits below this parent in each hierarchy (crun's cgroupsPath `/sandpit/<id>`). */
export const CGROUP_PARENT = 'sandpit';

/**
 * The CPU weight of all sandboxes together, against 1024 for each of the host's own groups (the
 * server's service or session among them): half of one. Lower serves the API first beside busy
 * sandboxes; higher lets sandboxes keep up beside busy host processes. Measured on this 2-CPU host
 * (`bench/sandbox-weight.bench.ts`): a GET's p99 beside eight sandboxes busy with system calls was
 * 306 / 25 / 6 / 8 ms at 1024 / 512 / 256 / 128, and a resume beside three busy host loops took
 * 0.8 / 2.4 / 2.9 / 6.2 s (docs/drivers.md).
 */
export const SANDBOXES_CPU_SHARES = 512;

const V1_CONTROLLERS = ['cpu', 'cpuacct', 'cpuset', 'memory', 'devices', 'freezer', 'blkio', 'pids', 'hugetlb'];

/**
 * The cgroup v1 hierarchies of this host, found from mountinfo (controllers
 * may be mounted separately or together, e.g. `cpu,cpuacct`).
 */
export class CgroupV1 {
  readonly controllers: ReadonlyMap<string, string>;
  /** Every cgroup mount (v1, named and v2) in which crun may create a directory. */
  readonly allMounts: readonly string[];

  private constructor(controllers: ReadonlyMap<string, string>, allMounts: readonly string[]) {
    this.controllers = controllers;
    this.allMounts = allMounts;
  }

  static async detect(): Promise<CgroupV1> {
    const controllers = new Map<string, string>();
    const all: string[] = [];
    for (const m of await listMounts()) {
      if (m.fsType !== 'cgroup' && m.fsType !== 'cgroup2') continue;
      all.push(m.mountPoint);
      if (m.fsType !== 'cgroup') continue;
      const opts = m.options.split(',');
      for (const c of V1_CONTROLLERS) if (opts.includes(c) && !controllers.has(c)) controllers.set(c, m.mountPoint);
    }
    return new CgroupV1(controllers, [...new Set(all)]);
  }

  dir(controller: string, id: string): string {
    const mount = this.controllers.get(controller);
    if (!mount) throw new Error(`cgroup controller ${controller} is not mounted`);
    return join(mount, CGROUP_PARENT, id);
  }

  /** Creates the parent group everywhere, weighted below the host's own; cpuset needs cpus/mems copied down before children work. */
  async prepareParent(): Promise<void> {
    for (const mount of this.controllers.values()) await mkdir(join(mount, CGROUP_PARENT), { recursive: true });
    const cpu = this.controllers.get('cpu');
    if (cpu) await writeFile(join(cpu, CGROUP_PARENT, 'cpu.shares'), String(SANDBOXES_CPU_SHARES));
    const cpuset = this.controllers.get('cpuset');
    if (cpuset) {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) {
        const mine = join(cpuset, CGROUP_PARENT, f);
        if ((await readFile(mine, 'utf8')).trim() === '') {
          await writeFile(mine, await readFile(join(cpuset, f), 'utf8'));
        }
      }
    }
  }

  async freezerState(id: string): Promise<string | undefined> {
    try {
      return (await readFile(join(this.dir('freezer', id), 'freezer.state'), 'utf8')).trim();
    } catch {
      return undefined;
    }
  }

  /**
   * Freezes every task of the sandbox and waits until the kernel reports them all frozen. A task caught
   * in some system calls can hold a v1 freezer in FREEZING for good; thawing and freezing again lets it
   * move past that point (runc retries the same way).
   */
  async freeze(id: string, timeoutMs = 5000): Promise<void> {
    const file = join(this.dir('freezer', id), 'freezer.state');
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      await writeFile(file, 'FROZEN');
      const retryAt = performance.now() + FREEZE_RETRY_MS;
      for (;;) {
        // Reading freezer.state is what advances FREEZING to FROZEN in v1.
        const state = (await readFile(file, 'utf8')).trim();
        if (state === 'FROZEN') return;
        if (performance.now() > deadline) {
          await writeFile(file, 'THAWED').catch(() => undefined);
          throw new Error(`sandbox ${id} did not freeze within ${timeoutMs} ms (state ${state})`);
        }
        if (performance.now() > retryAt) break;
        await sleep(1);
      }
      await writeFile(file, 'THAWED');
    }
  }

  async thaw(id: string): Promise<void> {
    await writeFile(join(this.dir('freezer', id), 'freezer.state'), 'THAWED');
  }

  async procs(id: string): Promise<number[]> {
    const ctrl = this.controllers.has('pids') ? 'pids' : 'freezer';
    try {
      const text = await readFile(join(this.dir(ctrl, id), 'cgroup.procs'), 'utf8');
      return text.split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  }

  async readNumber(controller: string, id: string, file: string): Promise<number> {
    try {
      return Number((await readFile(join(this.dir(controller, id), file), 'utf8')).trim()) || 0;
    } catch {
      return 0;
    }
  }

  /** Removes the sandbox's group from every hierarchy; retries while its last tasks exit. */
  async remove(id: string, timeoutMs = 3000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (const mount of this.allMounts) {
      const dir = join(mount, CGROUP_PARENT, id);
      for (;;) {
        try {
          // Nested groups (made inside the sandbox's cgroup namespace) go first.
          const children = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory());
          for (const c of children) await rmdir(join(dir, c.name)).catch(() => undefined);
          await rmdir(dir);
          break;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') break;
          if (code !== 'EBUSY' || performance.now() > deadline) {
            throw new Error(`cannot remove cgroup ${dir}: ${(err as Error).message}`);
          }
          await sleep(5);
        }
      }
    }
  }

  async exists(id: string): Promise<boolean> {
    for (const mount of this.allMounts) {
      try {
        await readdir(join(mount, CGROUP_PARENT, id));
        return true;
      } catch {
        /* not here */
      }
    }
    return false;
  }
}
