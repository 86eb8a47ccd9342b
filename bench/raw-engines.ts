/** The raw engines, timed alone on a template root: what a Sandpit figure is compared with in the same run. */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { cpuOf } from './process-cpu.ts';
import { sample } from './stats.ts';

const run = promisify(execFile);

/**
 * A bundle in a fresh directory running /bin/true on `rootfs` (read-only); `make` writes its default
 * config.json, `edit` changes it further.
 */
async function trueBundle(rootfs: string, make: (dir: string) => Promise<unknown>, edit: (spec: any) => void = () => undefined): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-bench-raw-'));
  await make(dir);
  const spec = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
  spec.process.terminal = false;
  spec.process.args = ['/bin/true'];
  spec.root = { path: rootfs, readonly: true };
  edit(spec);
  await writeFile(join(dir, 'config.json'), JSON.stringify(spec));
  return dir;
}

/** `crun run /bin/true`, n times. */
export async function rawCrunTrue(rootfs: string, n: number): Promise<number[]> {
  const dir = await trueBundle(rootfs, (d) => run('crun', ['spec'], { cwd: d }));
  try {
    let i = 0;
    return await sample(n, () => run('crun', ['--root', join(dir, 'state'), 'run', '--bundle', dir, `bench-${process.pid}-${i++}`]));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `runsc run /bin/true` of one build on one platform (no network), n times. */
export async function rawRunscTrue(runsc: string, platform: string, rootfs: string, n: number): Promise<number[]> {
  const dir = await trueBundle(rootfs, (d) => run(runsc, ['spec', '--bundle', d]));
  try {
    let i = 0;
    return await sample(n, () => run(runsc, ['--root', join(dir, 'state'), `--platform=${platform}`, '--network=none', 'run', '--bundle', dir, `bench-${process.pid}-${i++}`]));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The CPU (ms per second) of one raw `runsc run` of `sleep` (no network) over `seconds`, once it has
 * booted; on the first `cpus` CPUs (its cpuset, from which runsc takes its CPU count), else on all.
 */
export async function rawRunscIdleCpu(runsc: string, platform: string, rootfs: string, seconds: number, cpus?: number): Promise<number> {
  const dir = await trueBundle(
    rootfs,
    (d) => run(runsc, ['spec', '--bundle', d]),
    (spec) => {
      spec.process.args = ['/bin/sleep', String(seconds + 30)];
      if (cpus) spec.linux.resources = { ...spec.linux.resources, cpu: { cpus: `0-${cpus - 1}` } };
    },
  );
  const id = `bench-idle-${process.pid}`;
  const state = join(dir, 'state');
  try {
    // Detached, the sandbox keeps the pipes of `runsc run` open: wait for its exit, not its output.
    const child = spawn(runsc, ['--root', state, `--platform=${platform}`, '--network=none', 'run', '--detach', '--bundle', dir, id], { stdio: 'ignore' });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`runsc run --detach exited ${code}`);
    await sleep(2000);
    // The engine's processes are found by their state directory, which each names in its arguments.
    const before = await cpuOf(state);
    await sleep(seconds * 1000);
    return (((await cpuOf(state)) - before) * 1000) / seconds;
  } finally {
    await run(runsc, ['--root', state, 'delete', '--force', id]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}
