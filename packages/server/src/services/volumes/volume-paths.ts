import { ApiError, badRequest, conflict, notFound } from '../../errors.ts';
import { Beneath } from '../../runtime/host/beneath.ts';

/** A path inside the volume, `/`-rooted or relative to its root, without `.` or `..` parts. */
export function relPath(path: string): string {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw badRequest(`path '${path.slice(0, 256)}' may not contain '..'`);
  if (parts.length === 0) throw badRequest('path names no file');
  if (path.includes('\0')) throw badRequest('path holds a NUL byte');
  return parts.join('/');
}

/** Runs `fn` on the volume's root; errors of the file system become the API's. */
export async function withRoot<T>(root: string, fn: (b: Beneath) => Promise<T>): Promise<T> {
  const b = new Beneath(root);
  try {
    return await fn(b);
  } catch (err) {
    throw fsError(err);
  } finally {
    b.close();
  }
}

function fsError(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  const e = err as NodeJS.ErrnoException;
  const msg = e.message.replace(/^\w+ /, '');
  switch (e.code) {
    case 'ENOENT':
      return notFound(`no such file in the volume: ${msg}`);
    case 'EXDEV':
    case 'ELOOP':
      return badRequest(`the path leaves the volume or goes through a symlink that does: ${msg}`);
    case 'ENOTDIR':
    case 'EISDIR':
    case 'EEXIST':
    case 'EINVAL':
      return badRequest(msg);
    case 'ENOTEMPTY':
      return conflict(`the directory is not empty: ${msg}`);
    default:
      return err;
  }
}

/** Like `relPath`, but the volume's root (`/` or empty) is allowed and is `''`. */
export const relPathOrRoot = (path: string): string => (path.split('/').every((p) => p === '' || p === '.') ? '' : relPath(path));
