/** The raw engines, timed alone on a template root: what a Sandpit figure is compared with in the same run. */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sample } from './stats.ts';

const run = promisify(execFile);

/** A bundle in a fresh directory running /bin/true on `rootfs` (read-only); `make` writes its default config.json. */
async function trueBundle(rootfs: string, make: (dir: string) => Promise<unknown>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-bench-raw-'));
  await make(dir);
  const spec = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
  spec.process.terminal = false;
  spec.process.args = ['/bin/true'];
  spec.root = { path: rootfs, readonly: true };
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
