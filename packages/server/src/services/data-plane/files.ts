import { posix } from 'node:path';
import { Readable } from 'node:stream';
import { iso, type Clock } from '../../clock.ts';
import { ApiError, badRequest, conflict, forbidden, internal, notFound, unavailable } from '../../errors.ts';
import { type AgentClient, type AgentError, type AgentProcess, FILE_NOW_MAX, type FileRequest, fileFailure } from '../../runtime/agent-client.ts';
import { decodeTlv, decodeTlvList, EntryTag, EntryType, EventKind, EventTag, RecordTag, splitTlv } from '../../runtime/agent-protocol.ts';
import type { FileEntry as FileEntryView, WatchEvent } from '../../schemas/files.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';
import type { AgentPool } from '../../runtime/agent-pool.ts';
import { SANDBOX_HOME, SANDBOX_USER } from '../../templates/sandbox-user.ts';
import type { SandboxService } from '../sandboxes/sandboxes.ts';
import { DISCARD_MAX } from '../../oversized-body.ts';

/**
 * Upload body chunks (64 KiB socket reads) are gathered up to this much per agent frame: each frame
 * costs the sandbox at least a file write, a trap under gVisor.
 */
const UPLOAD_BATCH = 1024 * 1024;
/** Run as root with the directory and the user: makes each missing directory down to it, owned by the user. */
const MAKE_PARENTS_FOR = 'd=$1; u=$2; set --; while [ ! -e "$d" ]; do set -- "$d" "$@"; d=$(dirname -- "$d"); done; for x do mkdir -- "$x" && chown -- "$u:" "$x" || exit 1; done';
/** Kernel send buffer of a transfer connection: room for a full batch and the next one. */
const TRANSFER_SNDBUF = 4 * 1024 * 1024;

/** The API's file entry, plus owner ids (not in the API; the E2B layer names them). */
export type FileEntry = FileEntryView & { uid?: number; gid?: number };

export type { WatchEvent };

/** Validates a request path and makes it absolute (relative to /home/user). */
export function sandboxPath(raw: string | undefined, what = 'path'): string {
  if (raw === undefined || raw === '') throw badRequest(`${what} must not be empty`);
  if (raw.includes('\0')) throw badRequest(`${what} must not contain NUL bytes`);
  if (raw.length > 4096) throw badRequest(`${what} is longer than 4096 characters`);
  return raw.startsWith('/') ? raw : posix.join(SANDBOX_HOME, raw);
}

/** Maps what the agent reports (an errno) to the API's error envelope. */
export function fileError(err: unknown, path: string): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as AgentError;
  const detail = (e.message ?? String(err)).trim();
  switch (e.code) {
    case 'ENOENT':
      return notFound(`${path}: no such file or directory`);
    case 'EISDIR':
      return badRequest(`${path} is a directory`);
    case 'ENOTDIR':
      return badRequest(`${path}: a component of the path is not a directory`);
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return forbidden(`${path}: permission denied`);
    case 'EEXIST':
      return conflict(`${path} already exists`);
    case 'ENOTEMPTY':
      return conflict(`${path} is a directory that is not empty (use recursive)`);
    case 'EBUSY':
      return conflict(`${path} is busy`);
    case 'EDQUOT':
    case 'ENOSPC':
      return new ApiError(507, 'insufficient_storage', `the sandbox disk is full (${detail}); nothing was written`);
    case 'EFBIG':
      return new ApiError(413, 'payload_too_large', `${path}: file too large`);
    case 'EINVAL':
    case 'ENAMETOOLONG':
    case 'ELOOP':
    case 'EXDEV':
      return badRequest(detail);
    case 'ECONNRESET':
      return unavailable('the sandbox agent connection was lost; retry');
    default:
      return internal(`file operation failed: ${detail}`);
  }
}

function permissions(mode: number): string {
  let s = '';
  for (let i = 8; i >= 0; i--) s += mode & (1 << i) ? 'rwx'[(8 - i) % 3] : '-';
  return s;
}

function decodeEntry(value: Buffer, path: string, clock: Clock): FileEntry {
  const t = decodeTlv(value);
  const mode = t.get(EntryTag.mode)?.readUInt32LE(0) ?? 0;
  const entry: FileEntry = {
    name: posix.basename(path) || '/',
    path,
    type: EntryType[t.get(EntryTag.type)?.readUInt8(0) ?? 3] ?? 'other',
    size: Number(t.get(EntryTag.size)?.readBigUInt64LE(0) ?? 0n),
    mode: mode & 0o7777,
    permissions: permissions(mode),
    modified_at: iso(Number(t.get(EntryTag.mtimeMs)?.readBigUInt64LE(0) ?? BigInt(clock.now()))),
  };
  const target = t.get(EntryTag.target);
  if (target) entry.symlink_target = target.toString('utf8');
  const uid = t.get(EntryTag.uid);
  const gid = t.get(EntryTag.gid);
  if (uid?.length === 4) entry.uid = uid.readUInt32LE(0);
  if (gid?.length === 4) entry.gid = gid.readUInt32LE(0);
  return entry;
}

/**
 * Reads a body up to `limit` bytes: the whole of it when it ends by then, else a stream that gives
 * the bytes read so far and then the rest of the body.
 */
async function takeSmall(body: Readable, limit: number): Promise<{ whole: Buffer } | { rest: Readable }> {
  const it: AsyncIterator<Buffer | string> = body[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let size = 0;
  for (;;) {
    const next = await it.next();
    if (next.done) return { whole: Buffer.concat(head) };
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    head.push(chunk);
    size += chunk.length;
    if (size > limit) break;
  }
  const rest = async function* () {
    yield* head;
    for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
  };
  return { rest: Readable.from(rest(), { objectMode: false }) };
}

export interface Watch {
  path: string;
  proc: AgentProcess;
  early: Buffer[];
  keep: (b: Buffer) => void;
}

/** Resolves on 'spawn' (the operation started), rejects on a failure before that. */
function started(proc: AgentProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    proc.once('spawn', () => resolve());
    proc.once('error', reject);
  });
}

/**
 * Files inside a sandbox, through its agent, as `user`. Bulk transfers get an agent
 * connection of their own, so the socket's flow control is the transfer's flow control in
 * both directions and a slow client never holds up other traffic to the sandbox.
 */
export class FileService {
  readonly sandboxes: SandboxService;
  readonly agents: AgentPool;
  readonly clock: Clock;

  constructor(sandboxes: SandboxService, agents: AgentPool, clock: Clock) {
    this.sandboxes = sandboxes;
    this.agents = agents;
    this.clock = clock;
  }

  async #shared(rec: SandboxRecord): Promise<AgentClient> {
    return (await this.sandboxes.withAgent(rec)).client;
  }

  /** A connection of its own: dialed to a listening agent, or asked of an agent that dials the host. */
  async #dedicated(rec: SandboxRecord): Promise<AgentClient> {
    const live = await this.sandboxes.ensureActive(rec);
    try {
      const client = await this.agents.dedicated(live.id);
      client.setSendBuffer(TRANSFER_SNDBUF);
      return client;
    } catch {
      throw unavailable('the sandbox agent is not reachable; retry shortly');
    }
  }

  /**
   * A small operation run by the agent itself (no helper process), or undefined from an agent older
   * than that (the caller falls back to a helper) or, for EFBIG, when the file is too large for it.
   */
  async #now(rec: SandboxRecord, req: FileRequest & { data?: Buffer }): Promise<{ entry?: FileEntry; data?: Buffer } | undefined> {
    const client = await this.#shared(rec);
    try {
      const out = await client.fileNow(req);
      return { entry: out.entry && decodeEntry(out.entry, req.to ?? req.path, this.clock), data: out.data };
    } catch (err) {
      const code = (err as AgentError).code;
      if (code === 'ENOSYS' || (code === 'EFBIG' && (req.op === 'read' || req.op === 'write'))) return undefined;
      throw fileError(err, code === 'EEXIST' && req.to ? req.to : req.path);
    }
  }

  async stat(rec: SandboxRecord, raw: string | undefined, user = SANDBOX_USER): Promise<FileEntry> {
    const path = sandboxPath(raw);
    const now = await this.#now(rec, { op: 'stat', path, user });
    if (now?.entry) return now.entry;
    const client = await this.#shared(rec);
    const out = await client.fileResult({ op: 'stat', path, user }).catch((err) => {
      throw fileError(err, path);
    });
    const rec0 = decodeTlvList(out).find((r) => r.tag === RecordTag.entry);
    if (!rec0) throw internal('the agent returned no file information');
    return decodeEntry(rec0.value, path, this.clock);
  }

  async list(rec: SandboxRecord, raw: string | undefined, user = SANDBOX_USER): Promise<FileEntry[]> {
    const path = sandboxPath(raw);
    const client = await this.#shared(rec);
    const out = await client.fileResult({ op: 'list', path, user }).catch((err) => {
      throw fileError(err, path);
    });
    const entries = decodeTlvList(out)
      .filter((r) => r.tag === RecordTag.entry)
      .map((r) => {
        const name = decodeTlv(r.value).get(EntryTag.name)?.toString('utf8') ?? '';
        return decodeEntry(r.value, posix.join(path, name), this.clock);
      });
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async mkdir(rec: SandboxRecord, raw: string, parents: boolean, user = SANDBOX_USER): Promise<FileEntry> {
    const path = sandboxPath(raw);
    const now = await this.#now(rec, { op: 'mkdir', path, parents, user });
    if (now?.entry) return now.entry;
    const client = await this.#shared(rec);
    await client.fileResult({ op: 'mkdir', path, parents, user }).catch((err) => {
      throw fileError(err, path);
    });
    return this.stat(rec, path, user);
  }

  /**
   * Creates the directories missing above `raw` as root and gives each to `user`, as E2B's envd
   * (which runs as root) does for any path a write names, `/0/...` included.
   */
  async makeParentsFor(rec: SandboxRecord, raw: string, user: string): Promise<void> {
    const path = sandboxPath(raw);
    const client = await this.#shared(rec);
    const proc = client.spawn({ argv: ['/bin/sh', '-c', MAKE_PARENTS_FOR, 'sh', posix.dirname(path), user], user: 'root', cwd: '/', stdin: false });
    const errs: Buffer[] = [];
    proc.on('stderr', (b: Buffer) => errs.push(b));
    const code = await new Promise<number | null>((resolve, reject) => {
      proc.once('exit', (info) => resolve(info.exitCode));
      proc.once('error', reject);
    });
    if (code !== 0) throw forbidden(`${posix.dirname(path)}: cannot be created (${Buffer.concat(errs).toString('utf8').trim().slice(0, 200)})`);
  }

  async remove(rec: SandboxRecord, raw: string, recursive: boolean, user = SANDBOX_USER): Promise<void> {
    const path = sandboxPath(raw);
    if (!recursive && (await this.#now(rec, { op: 'remove', path, user }))) return;
    const client = await this.#shared(rec);
    await client.fileResult({ op: 'remove', path, recursive, user }).catch((err) => {
      throw fileError(err, path);
    });
  }

  async rename(rec: SandboxRecord, rawFrom: string, rawTo: string, overwrite: boolean, user = SANDBOX_USER): Promise<FileEntry> {
    const from = sandboxPath(rawFrom, 'from');
    const to = sandboxPath(rawTo, 'to');
    const now = await this.#now(rec, { op: 'rename', path: from, to, noOverwrite: !overwrite, user });
    if (now?.entry) return now.entry;
    const client = await this.#shared(rec);
    await client.fileResult({ op: 'rename', path: from, to, noOverwrite: !overwrite, user }).catch((err) => {
      throw fileError(err, (err as AgentError).code === 'EEXIST' ? to : from);
    });
    return this.stat(rec, to, user);
  }

  /**
   * Opens a file for download: errors (missing, a directory, forbidden) come before any byte.
   * The stream pauses the agent connection when the HTTP client reads slowly; it fails (so the
   * response is cut short, never silently truncated) if the file changed size while being read.
   */
  async download(rec: SandboxRecord, raw: string | undefined, user = SANDBOX_USER): Promise<{ path: string; size: number; stream: Readable }> {
    const path = sandboxPath(raw);
    const now = await this.#now(rec, { op: 'read', path, user });
    if (now?.data) return { path, size: now.data.length, stream: Readable.from([now.data], { objectMode: false }) };
    const client = await this.#dedicated(rec);
    const proc = client.file({ op: 'read', path, user, direct: true });
    const spawned = started(proc);
    // Listeners go on before any await: output can arrive in the same read as SPAWNED.
    let got = 0;
    const errs: Buffer[] = [];
    const stream = new Readable({
      highWaterMark: 4 * 1024 * 1024,
      read: () => client.resume(),
      destroy: (err, cb) => {
        client.close();
        cb(err);
      },
    });
    proc.on('stdout', (b: Buffer) => {
      got += b.length;
      if (!stream.push(b)) client.pause();
    });
    proc.on('stderr', (b: Buffer) => errs.push(b));
    proc.once('exit', (info) => {
      const size = proc.size ?? 0;
      const failure = fileFailure(info, Buffer.concat(errs)) ?? (got === size ? undefined : new Error(`${path} changed size while being read (${got} of ${size} bytes)`));
      if (failure) stream.destroy(failure);
      else stream.push(null);
    });
    try {
      await spawned;
    } catch (err) {
      client.close();
      throw fileError(err, path);
    }
    const size = proc.size ?? 0;
    proc.once('error', (err) => stream.destroy(err));
    return { path, size, stream };
  }

  /**
   * Streams a request body into a file. The agent writes into an unnamed temporary file in the
   * target directory that gets its name only when complete; on any failure (disk quota, client
   * gone) nothing is left behind. Missing parent directories are created.
   */
  async upload(rec: SandboxRecord, raw: string | undefined, input: Readable, user = SANDBOX_USER): Promise<FileEntry> {
    const path = sandboxPath(raw);
    const small = await takeSmall(input, FILE_NOW_MAX);
    if ('whole' in small) {
      const now = await this.#now(rec, { op: 'write', path, parents: true, user, data: small.whole });
      if (now?.entry) return now.entry;
    }
    const body = 'rest' in small ? small.rest : Readable.from([small.whole], { objectMode: false });
    const client = await this.#dedicated(rec);
    try {
      const proc = client.file({ op: 'write', path, parents: true, user, direct: true });
      const errs: Buffer[] = [];
      proc.on('stderr', (b: Buffer) => errs.push(b));
      const ended = new Promise<Error | undefined>((resolve) => {
        proc.once('exit', (info) => resolve(fileFailure(info, Buffer.concat(errs)) ?? undefined));
        proc.once('error', resolve);
      });
      await started(proc).catch((err) => {
        throw fileError(err, path);
      });
      await new Promise<void>((resolve, reject) => {
        // Chunks that arrive together (one socket wakeup reads up to 32 of them) leave as one frame.
        let batch: Buffer[] = [];
        let batched = 0;
        let flushing = false;
        const flush = () => {
          flushing = false;
          if (!batched) return;
          const ok = proc.write(batch);
          batch = [];
          batched = 0;
          if (ok) return;
          body.pause();
          void client.drained().then(() => body.resume());
        };
        const onData = (chunk: Buffer) => {
          batch.push(chunk);
          batched += chunk.length;
          if (batched >= UPLOAD_BATCH) flush();
          else if (!flushing) {
            flushing = true;
            setImmediate(flush);
          }
        };
        const stop = () => {
          body.off('data', onData);
          body.off('end', onEnd);
          body.off('error', onError);
          batch = [];
          batched = 0;
        };
        const onEnd = () => {
          flush();
          stop();
          resolve();
        };
        const onError = (err: Error) => {
          stop();
          reject(err);
        };
        body.on('data', onData);
        body.once('end', onEnd);
        body.once('error', onError);
        // The helper ended before the body did (disk full): discard the rest so the client, still
        // sending, gets to read the answer; past DISCARD_MAX the caller closes the connection instead.
        void ended.then(() => {
          stop();
          let discarded = 0;
          const discard = (chunk: Buffer) => {
            discarded += chunk.length;
            if (discarded <= DISCARD_MAX) return;
            body.off('data', discard);
            body.pause();
            resolve();
          };
          body.on('data', discard);
          body.once('end', () => resolve());
          body.once('error', () => resolve());
          body.resume(); // it may be paused waiting for a drain that will not come
        });
      });
      proc.closeStdin();
      const failure = await ended;
      if (failure) throw fileError(failure, path);
    } finally {
      client.close();
    }
    return this.stat(rec, path, user);
  }

  /** Starts watching; fails with an envelope before the stream opens (missing, not a directory). */
  async openWatch(rec: SandboxRecord, raw: string | undefined, recursive: boolean, user = SANDBOX_USER): Promise<Watch> {
    const path = sandboxPath(raw);
    const client = await this.#shared(rec);
    const proc = client.file({ op: 'watch', path, recursive, user });
    // Events may arrive right behind SPAWNED, before streamWatch listens: keep them.
    const early: Buffer[] = [];
    const keep = (b: Buffer) => early.push(b);
    proc.on('stdout', keep);
    await started(proc).catch((err) => {
      throw fileError(err, path);
    });
    return { path, proc, early, keep };
  }

  /** Sends one event per change until the directory goes away or `signal` aborts (client gone). */
  async streamWatch({ path, proc, early, keep }: Watch, send: (ev: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    const onAbort = () => proc.kill('SIGKILL');
    signal.addEventListener('abort', onAbort, { once: true });
    let rest: Buffer = Buffer.alloc(0);
    const onChunk = (chunk: Buffer) => {
      const recs: { tag: number; value: Buffer }[] = [];
      rest = splitTlv(rest.length ? Buffer.concat([rest, chunk]) : chunk, recs);
      for (const r of recs) {
        if (r.tag !== RecordTag.event) continue;
        const t = decodeTlv(r.value);
        const name = t.get(EventTag.name)?.toString('utf8') ?? '';
        const type = EventKind[t.get(EventTag.kind)?.readUInt8(0) ?? 0];
        // A kind this server's contract does not name (a newer agent) is not passed on.
        if (!type) continue;
        send({
          timestamp: iso(this.clock.now()),
          type,
          path: name ? posix.join(path, name) : path,
          is_dir: (t.get(EventTag.isDir)?.readUInt8(0) ?? 0) !== 0,
        });
      }
    };
    proc.off('stdout', keep);
    for (const b of early) onChunk(b);
    proc.on('stdout', onChunk);
    const error = await new Promise<string | undefined>((resolve) => {
      proc.once('exit', (info) => resolve(info.exitCode === 0 || signal.aborted ? undefined : `watch ended with status ${info.exitCode}`));
      proc.once('error', (err) => resolve(err.message));
    });
    signal.removeEventListener('abort', onAbort);
    const final: WatchEvent = { timestamp: iso(this.clock.now()), finished: true };
    if (error) final.error = error;
    send(final);
  }
}
