import { posix } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import ssh2, { type Attributes, type FileEntry as SftpName, type SFTPWrapper } from 'ssh2';
import { ApiError } from '../errors.ts';
import type { FileEntry, FileService } from '../services/data-plane/files.ts';
import { SSH_HOME } from '../services/ssh/ssh-access.ts';
import type { SandboxRecord } from '../store/sandboxes.ts';

// ssh2 is CommonJS: its named exports are read off the default export.
const { utils } = ssh2;

const { OPEN_MODE, STATUS_CODE } = utils.sftp;
/** Read-ahead kept per open file before the agent stream is paused. */
const READ_BUFFER_BYTES = 8 * 1024 * 1024;
/** Writes that arrive ahead of a gap, kept until it is filled; past this the write fails. */
const WRITE_AHEAD_BYTES = 64 * 1024 * 1024;
/** Directory entries per READDIR answer. */
const NAMES_PER_REPLY = 256;

const TYPE_BITS: Record<FileEntry['type'], number> = { file: 0o100000, dir: 0o040000, symlink: 0o120000, other: 0 };

function attrs(e: FileEntry): Attributes {
  const mtime = Math.floor(Date.parse(e.modified_at) / 1000);
  return { mode: TYPE_BITS[e.type] | e.mode, uid: e.uid ?? 1000, gid: e.gid ?? 1000, size: e.size, atime: mtime, mtime };
}

function longname(e: FileEntry): string {
  const t = e.type === 'dir' ? 'd' : e.type === 'symlink' ? 'l' : '-';
  const when = new Date(e.modified_at).toUTCString().slice(5, 22);
  return `${t}${e.permissions} 1 user user ${String(e.size).padStart(10)} ${when} ${e.name}`;
}

/** An SFTP status for an error of the file service. */
function statusOf(err: unknown): number {
  if (!(err instanceof ApiError)) return STATUS_CODE.FAILURE;
  if (err.status === 404) return STATUS_CODE.NO_SUCH_FILE;
  if (err.status === 403) return STATUS_CODE.PERMISSION_DENIED;
  return STATUS_CODE.FAILURE;
}

/** A file opened for reading: the agent's sequential read stream, served to offset-addressed READs (clients read in order, several ahead). */
class ReadHandle {
  #chunks: Buffer[] = [];
  #base = 0;
  #buffered = 0;
  #ended = false;
  #error: unknown;
  #waiters: (() => void)[] = [];
  readonly #stream: Readable;

  constructor(stream: Readable) {
    this.#stream = stream;
    stream.on('data', (b: Buffer) => {
      this.#chunks.push(b);
      this.#buffered += b.length;
      if (this.#buffered > READ_BUFFER_BYTES) stream.pause();
      this.#wake();
    });
    stream.once('end', () => {
      this.#ended = true;
      this.#wake();
    });
    stream.once('error', (err) => {
      this.#error = err;
      this.#ended = true;
      this.#wake();
    });
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  /** The bytes at [offset, offset+length), shorter at the end of the file; undefined at EOF. */
  async read(offset: number, length: number): Promise<Buffer | undefined> {
    if (offset < this.#base) throw new Error('sftp: reading backwards is not supported');
    while (!this.#ended && this.#base + this.#buffered < offset + length) await new Promise<void>((r) => this.#waiters.push(r));
    if (this.#error) throw this.#error;
    const end = this.#base + this.#buffered;
    if (offset >= end) return undefined;
    // What lies before this read is not asked for again: drop it.
    let drop = offset - this.#base;
    while (drop > 0) {
      const first = this.#chunks[0]!;
      if (first.length <= drop) {
        this.#chunks.shift();
        drop -= first.length;
        this.#base += first.length;
        this.#buffered -= first.length;
      } else {
        this.#chunks[0] = first.subarray(drop);
        this.#base += drop;
        this.#buffered -= drop;
        drop = 0;
      }
    }
    const out = Buffer.allocUnsafe(Math.min(length, end - offset));
    let filled = 0;
    for (const c of this.#chunks) {
      if (filled === out.length) break;
      filled += c.copy(out, filled, 0, Math.min(c.length, out.length - filled));
    }
    if (this.#buffered <= READ_BUFFER_BYTES) this.#stream.resume();
    return out;
  }

  close(): void {
    this.#stream.destroy();
  }
}

/** A file opened for writing: in-order WRITEs stream into the file service's upload (the file appears complete at CLOSE). */
class WriteHandle {
  readonly body = new PassThrough({ highWaterMark: 4 * 1024 * 1024 });
  done: Promise<unknown>;
  #next = 0;
  #ahead = new Map<number, Buffer>();
  #aheadBytes = 0;
  #failed: unknown;

  constructor(upload: (body: Readable) => Promise<unknown>) {
    this.done = upload(this.body).catch((err: unknown) => {
      this.#failed = err;
      throw err;
    });
    this.done.catch(() => undefined);
  }

  /** Resolves when the bytes are taken (after a drain when the upload is behind). */
  async write(offset: number, data: Buffer): Promise<void> {
    if (this.#failed) throw this.#failed;
    if (offset < this.#next) throw new Error('sftp: overwriting is not supported');
    if (offset > this.#next) {
      if (this.#aheadBytes + data.length > WRITE_AHEAD_BYTES) throw new Error('sftp: writes too far out of order');
      this.#ahead.set(offset, data);
      this.#aheadBytes += data.length;
      return;
    }
    let ok = this.#push(data);
    for (let d = this.#ahead.get(this.#next); d; d = this.#ahead.get(this.#next)) {
      this.#ahead.delete(this.#next);
      this.#aheadBytes -= d.length;
      ok = this.#push(d);
    }
    if (!ok) await new Promise<void>((r) => this.body.once('drain', r));
  }

  #push(d: Buffer): boolean {
    this.#next += d.length;
    return this.body.write(d);
  }

  async close(): Promise<void> {
    if (this.#ahead.size) {
      this.body.destroy(new Error('sftp: file closed with a gap'));
      throw new Error('sftp: file closed with a gap');
    }
    this.body.end();
    await this.done;
  }

  abort(): void {
    this.body.destroy(new Error('sftp session ended'));
  }
}

type Handle = { kind: 'read'; h: ReadHandle } | { kind: 'write'; h: WriteHandle } | { kind: 'dir'; entries: FileEntry[] | undefined; path: string };

/** The SFTP subsystem of one session, mapped onto the data plane's file operations as `user`. */
export function serveSftp(sftp: SFTPWrapper, files: FileService, live: Promise<SandboxRecord>): void {
  // Handlers are in place before the sandbox is (a resumed one takes a moment): requests wait for it, none go unanswered.
  const at = <T>(op: (rec: SandboxRecord) => Promise<T>): Promise<T> => live.then(op);
  const handles = new Map<number, Handle>();
  let nextHandle = 1;
  const abs = (p: string) => posix.resolve(SSH_HOME, p || '.');
  const newHandle = (h: Handle): Buffer => {
    const id = nextHandle++;
    handles.set(id, h);
    const b = Buffer.alloc(4);
    b.writeUInt32BE(id);
    return b;
  };
  const handleOf = (b: Buffer) => (b.length === 4 ? handles.get(b.readUInt32BE(0)) : undefined);
  const idOf = (b: Buffer) => b.readUInt32BE(0);
  const fail = (reqid: number) => (err: unknown) => sftp.status(reqid, statusOf(err), err instanceof Error ? err.message : undefined);
  const ok = (reqid: number) => () => sftp.status(reqid, STATUS_CODE.OK);

  sftp.on('REALPATH', (reqid, path) => {
    const p = abs(path);
    sftp.name(reqid, [{ filename: p, longname: p, attrs: {} as Attributes }]);
  });
  const stat = (reqid: number, path: string) => at((rec) => files.stat(rec, abs(path))).then((e) => sftp.attrs(reqid, attrs(e)), fail(reqid));
  sftp.on('STAT', stat);
  sftp.on('LSTAT', stat);
  sftp.on('FSTAT', (reqid, handle) => {
    const h = handleOf(handle);
    if (h?.kind !== 'dir') return sftp.status(reqid, h ? STATUS_CODE.OP_UNSUPPORTED : STATUS_CODE.FAILURE);
    void stat(reqid, h.path);
  });
  // Times and modes sent after an upload (scp -p, put -p) are accepted and not applied.
  sftp.on('SETSTAT', (reqid) => sftp.status(reqid, STATUS_CODE.OK));
  sftp.on('FSETSTAT', (reqid) => sftp.status(reqid, STATUS_CODE.OK));

  sftp.on('OPEN', (reqid, filename, flags) => {
    const path = abs(filename);
    if (flags & OPEN_MODE.WRITE) {
      // Whole-file writes only: the agent writes a new file that takes the name once complete.
      if (flags & (OPEN_MODE.READ | OPEN_MODE.APPEND) || !(flags & OPEN_MODE.CREAT)) return sftp.status(reqid, STATUS_CODE.OP_UNSUPPORTED, 'only whole-file writes (create or truncate) are supported');
      const h = new WriteHandle((body) => at((rec) => files.upload(rec, path, body)));
      return sftp.handle(reqid, newHandle({ kind: 'write', h }));
    }
    at((rec) => files.download(rec, path)).then(({ stream }) => sftp.handle(reqid, newHandle({ kind: 'read', h: new ReadHandle(stream) })), fail(reqid));
  });
  sftp.on('READ', (reqid, handle, offset, length) => {
    const h = handleOf(handle);
    if (h?.kind !== 'read') return sftp.status(reqid, STATUS_CODE.FAILURE, 'not a file open for reading');
    h.h.read(offset, length).then((b) => (b ? sftp.data(reqid, b) : sftp.status(reqid, STATUS_CODE.EOF)), fail(reqid));
  });
  sftp.on('WRITE', (reqid, handle, offset, data) => {
    const h = handleOf(handle);
    if (h?.kind !== 'write') return sftp.status(reqid, STATUS_CODE.FAILURE, 'not a file open for writing');
    h.h.write(offset, data).then(ok(reqid), fail(reqid));
  });
  sftp.on('CLOSE', (reqid, handle) => {
    const h = handleOf(handle);
    if (!h) return sftp.status(reqid, STATUS_CODE.FAILURE);
    handles.delete(idOf(handle));
    if (h.kind === 'write') return void h.h.close().then(ok(reqid), fail(reqid));
    if (h.kind === 'read') h.h.close();
    sftp.status(reqid, STATUS_CODE.OK);
  });

  sftp.on('OPENDIR', (reqid, path) => {
    const p = abs(path);
    at((rec) => files.list(rec, p)).then((entries) => sftp.handle(reqid, newHandle({ kind: 'dir', entries, path: p })), fail(reqid));
  });
  sftp.on('READDIR', (reqid, handle) => {
    const h = handleOf(handle);
    if (h?.kind !== 'dir') return sftp.status(reqid, STATUS_CODE.FAILURE);
    if (!h.entries?.length) return sftp.status(reqid, STATUS_CODE.EOF);
    const batch = h.entries.splice(0, NAMES_PER_REPLY);
    const names: SftpName[] = batch.map((e) => ({ filename: e.name, longname: longname(e), attrs: attrs(e) }));
    sftp.name(reqid, names);
  });

  sftp.on('MKDIR', (reqid, path) => void at((rec) => files.mkdir(rec, abs(path), false)).then(ok(reqid), fail(reqid)));
  sftp.on('RMDIR', (reqid, path) => void at((rec) => files.remove(rec, abs(path), false)).then(ok(reqid), fail(reqid)));
  sftp.on('REMOVE', (reqid, path) => void at((rec) => files.remove(rec, abs(path), false)).then(ok(reqid), fail(reqid)));
  sftp.on('RENAME', (reqid, from, to) => void at((rec) => files.rename(rec, abs(from), abs(to), false)).then(ok(reqid), fail(reqid)));
  sftp.on(
    'READLINK',
    (reqid, path) =>
      void at((rec) => files.stat(rec, abs(path))).then((e) => {
        if (e.symlink_target === undefined) return sftp.status(reqid, STATUS_CODE.FAILURE, 'not a symbolic link');
        sftp.name(reqid, [{ filename: e.symlink_target, longname: e.symlink_target, attrs: {} as Attributes }]);
      }, fail(reqid)),
  );
  sftp.on('SYMLINK', (reqid) => sftp.status(reqid, STATUS_CODE.OP_UNSUPPORTED));

  sftp.once('close', () => {
    for (const h of handles.values()) {
      if (h.kind === 'read') h.h.close();
      else if (h.kind === 'write') h.h.abort();
    }
    handles.clear();
  });
}
