import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../runtime/host/run-command.ts';
import type { BaseRecipe } from './base-recipe.ts';
import { debianMirror } from './debian-mirror.ts';
import { DebootstrapProgress } from './debootstrap-progress.ts';
import { fetchNpmTarball } from './fetch-npm-tarball.ts';

export interface BuildProgress {
  phase: string;
  done: number;
  total: number;
  line?: string;
}

export type ProgressFn = (p: BuildProgress) => void;

const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const CHROOT_ENV = { PATH: SYSTEM_PATH, HOME: '/root', LANG: 'C.UTF-8', DEBIAN_FRONTEND: 'noninteractive' };

/** Builds the complete `platform/base` root filesystem into `root` (which must not exist yet). */
export async function buildBase(root: string, recipe: BaseRecipe, cacheDir: string, mirrorOverride: string | undefined, progress: ProgressFn): Promise<void> {
  const debCache = join(cacheDir, 'debootstrap');
  const npmCache = join(cacheDir, 'npm');
  await Promise.all([mkdir(debCache, { recursive: true }), mkdir(npmCache, { recursive: true })]);

  // Downloads of Node and npm overlap the (much longer) debootstrap.
  const nodeTgz = fetchNpmTarball(recipe.nodePackage, npmCache);
  const npmTgz = fetchNpmTarball(recipe.npmPackage, npmCache);
  nodeTgz.catch(() => undefined);
  npmTgz.catch(() => undefined);

  const mirror = mirrorOverride ?? (await debianMirror(recipe.suite));
  const counter = new DebootstrapProgress();
  progress({ phase: 'debootstrap', done: 0, total: counter.total, line: `mirror ${mirror}` });
  await runCommand('debootstrap', [`--variant=${recipe.variant}`, `--cache-dir=${debCache}`, `--include=${recipe.packages.join(',')}`, recipe.suite, root, mirror], {
    env: { ...process.env, PATH: SYSTEM_PATH, DEBIAN_FRONTEND: 'noninteractive' },
    onLine: (line) => {
      if (counter.feed(line) || line.startsWith('E:') || line.startsWith('W:')) {
        progress({ phase: 'debootstrap', done: counter.done, total: counter.total, line });
      }
    },
  });
  progress({ phase: 'debootstrap', done: counter.total, total: counter.total });

  progress({ phase: 'node', done: 0, total: 1, line: recipe.nodePackage });
  const local = join(root, 'usr/local');
  await runCommand('tar', ['-xzf', await nodeTgz, '-C', local, '--strip-components=1', '--no-same-owner', 'package/bin', 'package/include', 'package/share']);
  progress({ phase: 'node', done: 1, total: 1 });

  progress({ phase: 'npm', done: 0, total: 1, line: recipe.npmPackage });
  const npmDir = join(local, 'lib/node_modules/npm');
  await mkdir(npmDir, { recursive: true });
  await runCommand('tar', ['-xzf', await npmTgz, '-C', npmDir, '--strip-components=1', '--no-same-owner']);
  await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin/npm'));
  await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin/npx'));
  progress({ phase: 'npm', done: 1, total: 1 });

  progress({ phase: 'user', done: 0, total: 1 });
  await runCommand('chroot', [root, '/bin/sh', '-s'], { input: recipe.userScript, env: CHROOT_ENV });
  progress({ phase: 'user', done: 1, total: 1 });

  progress({ phase: 'finalize', done: 0, total: 1 });
  await runCommand('chroot', [root, '/bin/sh', '-s'], { input: recipe.finalizeScript, env: CHROOT_ENV });
  const { stdout: nodeVersion } = await runCommand('chroot', [root, '/usr/local/bin/node', '--version'], { env: CHROOT_ENV });
  await writeFile(
    join(root, 'etc/sandpit-template.json'),
    `${JSON.stringify(
      {
        template: 'platform/base',
        node: nodeVersion.trim(),
        packages: recipe.packages,
        builtAt: new Date().toISOString(),
      },
      null,
      2,
    )}\n`,
  );
  progress({ phase: 'finalize', done: 1, total: 1 });
}
