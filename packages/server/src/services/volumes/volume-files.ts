import { closeSync, constants, createReadStream, createWriteStream, fstatSync, type Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { posix } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { ApiError, badRequest, conflict } from '../../errors.ts';
import { Beneath } from '../../runtime/host/beneath.ts';
import { relPath, withRoot } from './volume-paths.ts';
import type { Principal } from '../access/principal.ts';
import type { VolumeService } from './volumes.ts';
import { DISCARD_MAX } from '../../oversized-body.ts';

/** Owner of what the API writes into a volume: the sandbox's `user`, as its root is. */
const USER_ID = 1000;

export interface VolumeFileEntry {
  name: string;
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  size: number;
  modified_at: string;
}

/**
 * Whether an upload answered before its body was all read must close its connection: Node reads and
 * drops a declared body up to DISCARD_MAX after the answer, so a client still sending sees the answer
 * rather than a broken pipe; a larger or undeclared one would be read for nothing.
 */
export function closesUnreadUpload(req: IncomingMessage): boolean {
  const declared = req.headers['content-length'];
  return !req.complete && (declared === undefined || Number(declared) > DISCARD_MAX);
}

/**
 * Files of a volume without a sandbox, done on the host: every path resolves beneath the volume's
 * root in the kernel (openat2 RESOLVE_BENEATH, `runtime/host/beneath.ts`), so `..` and symlinks
 * leading out fail instead of reaching the host's files.
 */
export class VolumeFiles {
  readonly #volumes: VolumeService;

  constructor(volumes: VolumeService) {
    this.#volumes = volumes;
  }

  /** Unless `replace`, 409 when something is at `path` (checked before the body is read, and again atomically by the rename). */
  async upload(p: Principal, volume: string, path: string, body: Readable, length: number | undefined, replace = true): Promise<VolumeFileEntry> {
    const rec = await this.#volumes.get(p, volume);
    const rel = relPath(path);
    if (length !== undefined && length > rec.sizeMib * 1024 * 1024 - (await this.#volumes.usage(rec))) throw full(rec.name);
    return withRoot(this.#volumes.rootOf(rec), async (b) => {
      const parentRel = posix.dirname(rel);
      if (parentRel !== '.') b.mkdirs(parentRel, USER_ID, USER_ID);
      const { dir, name } = b.parent(rel);
      const taken = () => conflict(`'${path.slice(0, 256)}' exists already`);
      const tmp = `.${name.slice(0, 200)}.upload-${randomBytes(6).toString('hex')}`;
      try {
        if (!replace && (await lstat(`/proc/self/fd/${dir}/${name}`).catch(() => undefined))) throw taken();
        const fd = b.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644, dir);
        try {
          Beneath.chownIn(dir, tmp, USER_ID, USER_ID);
          await writeAll(body, createWriteStream('', { fd, autoClose: false, flush: true }));
          try {
            Beneath.renameIn(dir, tmp, name, replace);
          } catch (err) {
            throw (err as NodeJS.ErrnoException).code === 'EEXIST' ? taken() : err;
          }
          return entry(posix.basename(rel), `/${rel}`, fstatSync(fd));
        } finally {
          closeSync(fd);
        }
      } catch (err) {
        Beneath.unlinkIn(dir, tmp);
        if (diskFull(err as NodeJS.ErrnoException)) {
          await discardRest(body, DISCARD_MAX);
          throw full(rec.name);
        }
        throw err;
      } finally {
        closeSync(dir);
      }
    });
  }

  async download(p: Principal, volume: string, path: string): Promise<{ stream: Readable; size: number }> {
    const rec = await this.#volumes.get(p, volume);
    const rel = relPath(path);
    return withRoot(this.#volumes.rootOf(rec), async (b) => {
      const fd = b.open(rel, constants.O_RDONLY);
      const st = fstatSync(fd);
      if (!st.isFile()) {
        closeSync(fd);
        throw badRequest(`'${path.slice(0, 256)}' is not a regular file`);
      }
      return { stream: createReadStream('', { fd }), size: st.size };
    });
  }

  async list(p: Principal, volume: string, path: string): Promise<VolumeFileEntry[]> {
    const rec = await this.#volumes.get(p, volume);
    const rel = path === '/' || path === '' ? '' : relPath(path);
    return withRoot(this.#volumes.rootOf(rec), async (b) => {
      const fd = b.open(rel, constants.O_RDONLY | constants.O_DIRECTORY);
      try {
        // The descriptor's own /proc link: the directory opened beneath the root, not a path resolved again.
        const at = `/proc/self/fd/${fd}`;
        const names = (await readdir(at)).sort();
        const out: VolumeFileEntry[] = [];
        for (const name of names) {
          const st = await lstat(`${at}/${name}`).catch(() => undefined);
          if (st) out.push(entry(name, `/${rel ? `${rel}/` : ''}${name}`, st));
        }
        return out;
      } finally {
        closeSync(fd);
      }
    });
  }

  /** Removes a file, a symlink (not what it points to) or an empty directory. */
  async remove(p: Principal, volume: string, path: string): Promise<void> {
    const rec = await this.#volumes.get(p, volume);
    const rel = relPath(path);
    await withRoot(this.#volumes.rootOf(rec), async (b) => {
      const { dir, name } = b.parent(rel);
      let isDir = false;
      try {
        isDir = (await lstat(`/proc/self/fd/${dir}/${name}`)).isDirectory();
      } finally {
        closeSync(dir);
      }
      b.remove(rel, isDir);
    });
  }
}

/**
 * Pipes the body into the file. Unlike `pipeline`, a failed write leaves the body (the request)
 * open, so the answer can still be sent on its connection.
 */
function writeAll(body: Readable, out: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    out.once('error', (err) => {
      body.unpipe(out);
      reject(err);
    });
    out.once('finish', () => resolve());
    body.once('error', (err) => {
      out.destroy();
      reject(err);
    });
    body.pipe(out);
  });
}

/** Reads and drops the rest of a refused upload so the client, still sending, reads the answer; past `max` bytes the route closes the connection instead. */
function discardRest(body: Readable, max: number): Promise<void> {
  return new Promise((resolve) => {
    if (body.readableEnded || body.destroyed) return resolve();
    let seen = 0;
    const done = () => {
      body.off('data', onData);
      body.off('end', done);
      body.off('error', done);
      body.pause();
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > max) done();
    };
    body.on('data', onData);
    body.once('end', done);
    body.once('error', done);
    body.resume();
  });
}

/** ENOSPC, or EDQUOT (the qgroup limit), which Node's error table lacks: its code reads "Unknown system error -122". */
function diskFull(err: NodeJS.ErrnoException): boolean {
  return err.code === 'ENOSPC' || err.code === 'EDQUOT' || err.errno === -122;
}

function full(name: string): ApiError {
  return new ApiError(507, 'insufficient_storage', `volume '${name}' is full (its size is its quota; grow it with PATCH); nothing was written`);
}

function entry(name: string, path: string, st: Stats): VolumeFileEntry {
  const type = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'other';
  return { name, path, type, size: st.size, modified_at: st.mtime.toISOString() };
}
