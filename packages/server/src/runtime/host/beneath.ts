import { closeSync, constants, openSync } from 'node:fs';
import koffi from 'koffi';
import { libc } from './libc.ts';

const SYS_OPENAT2 = 437; // x86_64 and aarch64 alike
const RESOLVE_NO_MAGICLINKS = 0x02;
const RESOLVE_BENEATH = 0x08;
const AT_REMOVEDIR = 0x200;
const RENAME_NOREPLACE = 0x1;

koffi.struct('beneath_open_how', { flags: 'uint64', mode: 'uint64', resolve: 'uint64' });
const syscall = libc.func('long syscall(long number, ...)');
const mkdirat = libc.func('int mkdirat(int dirfd, const char *path, uint32_t mode)');
const unlinkat = libc.func('int unlinkat(int dirfd, const char *path, int flags)');
const renameat2 = libc.func('int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, uint32_t flags)');
const fchownat = libc.func('int fchownat(int dirfd, const char *path, uint32_t owner, uint32_t group, int flags)');
const strerror = libc.func('const char *strerror(int errnum)');

/** An errno-bearing error, as Node's fs raises them. */
export class BeneathError extends Error {
  readonly code: string;
  constructor(op: string, path: string) {
    const errno = koffi.errno();
    super(`${op} ${path}: ${strerror(errno)}`);
    this.code = ERRNO_CODES[errno] ?? `E${errno}`;
  }
}

const ERRNO_CODES: Record<number, string> = { 2: 'ENOENT', 13: 'EACCES', 17: 'EEXIST', 18: 'EXDEV', 20: 'ENOTDIR', 21: 'EISDIR', 28: 'ENOSPC', 39: 'ENOTEMPTY', 40: 'ELOOP', 122: 'EDQUOT' };

/**
 * File operations confined to a directory tree: every path is resolved by openat2 with
 * RESOLVE_BENEATH from the root's descriptor, so `..` past the root, absolute symlinks and
 * symlinks leading out fail (EXDEV) in the kernel instead of reaching the host. Operations on a
 * name (create, remove, rename) resolve its parent that way and act on the last component
 * relative to the parent's descriptor, never following a symlink there.
 */
export class Beneath {
  readonly #root: number;

  constructor(root: string) {
    this.#root = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
  }

  close(): void {
    closeSync(this.#root);
  }

  /** Opens `rel` (relative to the root) beneath it; the caller closes the descriptor. */
  open(rel: string, flags: number, mode = 0o644, at = this.#root): number {
    const how = { flags: flags | constants.O_NOFOLLOW | 0o2000000 /* O_CLOEXEC */, mode: flags & constants.O_CREAT ? mode : 0, resolve: RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
    const fd = Number(syscall(SYS_OPENAT2, 'int', at, 'const char *', rel === '' ? '.' : rel, 'beneath_open_how *', how, 'size_t', 24));
    if (fd < 0) throw new BeneathError('open', rel);
    return fd;
  }

  /** Opens the directory holding `rel`'s last component; returns it with that name. */
  parent(rel: string): { dir: number; name: string } {
    const parts = rel.split('/').filter(Boolean);
    const name = parts.pop();
    if (!name || name === '..' || name === '.') throw Object.assign(new Error(`'${rel}' names no file`), { code: 'EINVAL' });
    return { dir: this.open(parts.join('/'), constants.O_RDONLY | constants.O_DIRECTORY), name };
  }

  /** mkdir -p beneath the root, new directories owned by uid/gid. */
  mkdirs(rel: string, uid: number, gid: number): void {
    let at = '';
    for (const part of rel.split('/').filter(Boolean)) {
      if (part === '..' || part === '.') throw Object.assign(new Error(`'${rel}' is not normalized`), { code: 'EINVAL' });
      const dir = this.open(at, constants.O_RDONLY | constants.O_DIRECTORY);
      try {
        if (mkdirat(dir, part, 0o755) === 0) {
          if (fchownat(dir, part, uid, gid, 0x100 /* AT_SYMLINK_NOFOLLOW */) !== 0) throw new BeneathError('chown', rel);
        } else if (koffi.errno() !== 17) throw new BeneathError('mkdir', rel);
      } finally {
        closeSync(dir);
      }
      at = at ? `${at}/${part}` : part;
    }
  }

  /** Removes a file or an empty directory. */
  remove(rel: string, dir: boolean): void {
    const p = this.parent(rel);
    try {
      if (unlinkat(p.dir, p.name, dir ? AT_REMOVEDIR : 0) !== 0) throw new BeneathError('remove', rel);
    } finally {
      closeSync(p.dir);
    }
  }

  /** Renames `from` to `to`, both names in directory `dir` (a descriptor from `parent`); unless `replace`, EEXIST when `to` is there. */
  static renameIn(dir: number, from: string, to: string, replace = true): void {
    if (renameat2(dir, from, dir, to, replace ? 0 : RENAME_NOREPLACE) !== 0) throw new BeneathError('rename', to);
  }

  static unlinkIn(dir: number, name: string): void {
    unlinkat(dir, name, 0);
  }

  static chownIn(dir: number, name: string, uid: number, gid: number): void {
    if (fchownat(dir, name, uid, gid, 0x100) !== 0) throw new BeneathError('chown', name);
  }
}
