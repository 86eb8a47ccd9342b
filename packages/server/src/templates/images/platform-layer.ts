import { chmod, chown, lstat, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LayerCache } from '../layer-cache.ts';
import { chainKey } from '../layer-cache.ts';

/** Bumped when what this layer holds changes, so cached layers of the old form are not reused. */
const LAYER_FORM = 1;
const DEFAULT_UID = 1000;

export interface Account {
  uid: number;
  gid: number;
  home: string;
}

/**
 * The layer Sandpit puts over an image's root so its sandboxes work like
 * platform/base's, leaving the image's own files as they are: the `user`
 * account (the image's USER account when it names a non-root one, else a new
 * uid 1000 or the first free uid above), its home, and the mount points of
 * the agent and its socket. Cached by image digest.
 */
export async function platformLayer(cache: LayerCache, imageDigest: string, rootfs: string, imageUser: string | undefined): Promise<{ key: string; root: string; account: Account }> {
  const key = chainKey(`image-${imageDigest}`, { platformLayer: LAYER_FORM, user: imageUser ?? null });
  const passwd = await readImageFile(rootfs, 'etc/passwd');
  const group = await readImageFile(rootfs, 'etc/group');
  const account = chooseAccount(passwd, group, imageUser);
  if (await cache.has(key)) return { key, root: cache.root(key), account };

  const tmp = await mkdtemp(join(cache.dir, '..', '.platform-layer-'));
  const upper = join(tmp, 'root');
  try {
    await mkdir(join(upper, 'etc'), { recursive: true, mode: 0o755 });
    await writeFile(
      join(upper, 'etc/passwd'),
      withLine(withLine(passwd, 'root', 'root:x:0:0:root:/root:/bin/sh'), 'user', `user:x:${account.uid}:${account.gid}:Sandpit user:${account.home}:${await shellOf(rootfs)}`),
      { mode: 0o644 },
    );
    await writeFile(join(upper, 'etc/group'), withLine(withLine(group, 'root', 'root:x:0:'), 'user', `user:x:${account.gid}:`), { mode: 0o644 });
    for (const dir of ['run/sandpit', '.sandpit', 'proc', 'dev', 'sys']) await ensureDir(rootfs, upper, dir, 0o755);
    await ensureDir(rootfs, upper, 'root', 0o700);
    await ensureDir(rootfs, upper, 'tmp', 0o1777);
    if (!(await exists(join(rootfs, account.home)))) {
      await mkdir(join(upper, account.home), { recursive: true, mode: 0o755 });
      await chown(join(upper, account.home), account.uid, account.gid);
    }
    if (!(await exists(join(rootfs, '.sandpit/agent')))) {
      await mkdir(join(upper, '.sandpit'), { recursive: true, mode: 0o755 });
      await writeFile(join(upper, '.sandpit/agent'), '', { mode: 0o755 });
    }
    await cache.capture(upper, key);
    return { key, root: cache.root(key), account };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** `user`'s identity: the image's own `user`, else its USER account, else a free uid from 1000 up. */
export function chooseAccount(passwd: string, group: string, imageUser: string | undefined): Account {
  const entries = passwd
    .split('\n')
    .map((l) => l.split(':'))
    .filter((f) => f.length >= 7);
  const own = entries.find((f) => f[0] === 'user');
  if (own) return { uid: Number(own[2]), gid: Number(own[3]), home: own[5] || '/home/user' };
  const [name, grp] = (imageUser ?? '').split(':');
  if (name && name !== 'root' && name !== '0') {
    const e = entries.find((f) => f[0] === name || f[2] === name);
    if (e) return { uid: Number(e[2]), gid: grp && /^\d+$/.test(grp) ? Number(grp) : Number(e[3]), home: e[5] || '/home/user' };
    if (/^\d+$/.test(name)) return { uid: Number(name), gid: grp && /^\d+$/.test(grp) ? Number(grp) : Number(name), home: '/home/user' };
  }
  const usedUids = new Set(entries.map((f) => Number(f[2])));
  const usedGids = new Set(group.split('\n').map((l) => Number(l.split(':')[2])));
  let uid = DEFAULT_UID;
  while (usedUids.has(uid) || usedGids.has(uid)) uid++;
  return { uid, gid: uid, home: '/home/user' };
}

function withLine(text: string, name: string, line: string): string {
  if (text.split('\n').some((l) => l.split(':')[0] === name)) return text;
  return `${text}${text && !text.endsWith('\n') ? '\n' : ''}${line}\n`;
}

async function shellOf(rootfs: string): Promise<string> {
  return (await exists(join(rootfs, 'bin/bash'))) ? '/bin/bash' : '/bin/sh';
}

async function ensureDir(rootfs: string, upper: string, dir: string, mode: number): Promise<void> {
  if (await exists(join(rootfs, dir))) return;
  await mkdir(join(upper, dir), { recursive: true, mode });
  await chmod(join(upper, dir), mode);
}

/** A regular file of the image, read only when neither it nor /etc is a symlink (which would resolve on the host). */
async function readImageFile(rootfs: string, rel: string): Promise<string> {
  const [dir, file] = await Promise.all([lstat(join(rootfs, 'etc')).catch(() => undefined), lstat(join(rootfs, rel)).catch(() => undefined)]);
  if (!dir?.isDirectory() || !file?.isFile()) return '';
  return readFile(join(rootfs, rel), 'utf8').catch(() => '');
}

function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}
