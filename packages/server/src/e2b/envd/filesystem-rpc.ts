import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.ts';
import type { FileMetadataService } from '../../services/data-plane/file-metadata.ts';
import type { FileEntry, FileService, WatchEvent } from '../../services/data-plane/files.ts';
import type { SandboxService } from '../../services/sandboxes/sandboxes.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';
import type { Message, StreamContext } from '../connect.ts';
import { ConnectError } from '../errors.ts';
import { entryInfo } from './entry.ts';
import { envdSandbox, envdUser, userPath } from './target.ts';

/**
 * Sandpit's watch events as envd's. A name moved into place (how Sandpit's own uploads land: written
 * aside, then renamed) is a new name with new content: fsnotify-based envd reports a write there.
 */
const EVENT_TYPES: Record<string, string[]> = {
  create: ['EVENT_TYPE_CREATE'],
  write: ['EVENT_TYPE_WRITE'],
  remove: ['EVENT_TYPE_REMOVE'],
  rename_from: ['EVENT_TYPE_RENAME'],
  rename_to: ['EVENT_TYPE_CREATE', 'EVENT_TYPE_WRITE'],
  chmod: ['EVENT_TYPE_CHMOD'],
};
/** Events a polling watcher keeps between GetWatcherEvents calls; older ones are dropped. */
const WATCHER_BACKLOG = 10_000;
/** Deepest ListDir accepted: each level is one agent round trip per directory. */
const MAX_DEPTH = 32;

interface PollingWatcher {
  sandboxId: string;
  events: Message[];
  stop: AbortController;
  error?: string;
}

function fsEvents(root: string, ev: WatchEvent): Message[] {
  const types = ev.type ? EVENT_TYPES[ev.type] : undefined;
  if (!types || ev.path === undefined) return [];
  const name = posix.relative(root, ev.path);
  return types.map((type) => ({ name, type }));
}

/** envd's `filesystem.Filesystem` service over Sandpit's file service. */
export class FilesystemRpc {
  readonly sandboxes: SandboxService;
  readonly files: FileService;
  readonly metadata: FileMetadataService;
  readonly #watchers = new Map<string, PollingWatcher>();

  constructor(sandboxes: SandboxService, files: FileService, metadata: FileMetadataService) {
    this.sandboxes = sandboxes;
    this.files = files;
    this.metadata = metadata;
  }

  /** Entries as envd's, each with its user metadata. */
  async #entries(rec: SandboxRecord, list: FileEntry[]): Promise<Message[]> {
    const metadata = await this.metadata.of(
      rec,
      list.map((e) => e.path),
    );
    return list.map((e) => entryInfo(e, metadata.get(e.path)));
  }

  async #call(req: FastifyRequest): Promise<{ rec: SandboxRecord; user: string }> {
    return { rec: await envdSandbox(this.sandboxes, req), user: envdUser(req) };
  }

  stat = async (req: FastifyRequest, msg: Message): Promise<Message> => {
    const { rec, user } = await this.#call(req);
    return { entry: (await this.#entries(rec, [await this.files.stat(rec, userPath(msg.path, user), user)]))[0] };
  };

  listDir = async (req: FastifyRequest, msg: Message): Promise<Message> => {
    const { rec, user } = await this.#call(req);
    const depth = msg.depth === undefined ? 1 : Number(msg.depth);
    if (!Number.isInteger(depth) || depth < 0 || depth > MAX_DEPTH) throw new ConnectError('invalid_argument', `depth must be an integer from 1 to ${MAX_DEPTH}`);
    const root = userPath(msg.path, user);
    const top = await this.files.stat(rec, root, user);
    if (top.type !== 'dir') throw new ConnectError('invalid_argument', `${root} is not a directory`);
    // Depth first, names in order within a directory: the order envd's directory walk gives.
    const found: FileEntry[] = [];
    const walk = async (dir: string, level: number): Promise<void> => {
      for (const e of await this.files.list(rec, dir, user)) {
        found.push(e);
        if (e.type === 'dir' && level < Math.max(depth, 1)) await walk(e.path, level + 1);
      }
    };
    await walk(root, 1);
    return { entries: await this.#entries(rec, found) };
  };

  makeDir = async (req: FastifyRequest, msg: Message): Promise<Message> => {
    const { rec, user } = await this.#call(req);
    const path = userPath(msg.path, user);
    const existing = await this.files.stat(rec, path, user).catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 404) return undefined;
      throw err;
    });
    if (existing) throw new ConnectError('already_exists', `${path} already exists`);
    return { entry: entryInfo(await this.files.mkdir(rec, path, true, user)) };
  };

  move = async (req: FastifyRequest, msg: Message): Promise<Message> => {
    const { rec, user } = await this.#call(req);
    const source = userPath(msg.source, user);
    const moved = await this.files.rename(rec, source, userPath(msg.destination, user), true, user);
    await this.metadata.moved(rec, source, moved.path);
    return { entry: (await this.#entries(rec, [moved]))[0] };
  };

  remove = async (req: FastifyRequest, msg: Message): Promise<Message> => {
    const { rec, user } = await this.#call(req);
    // envd removes as os.RemoveAll does: a path that is already gone is no error.
    await this.files.remove(rec, userPath(msg.path, user), true, user).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    });
    await this.metadata.removed(rec, userPath(msg.path, user));
    return {};
  };

  /**
   * Streams changes until the client leaves or the deadline passes; the first message says the watch is set.
   * `includeEntry` (envd 0.6.3): each event carries the entry of its path where that still exists, in order.
   * `allowNetworkMounts` (0.6.4) changes nothing here: Sandpit's watch is not limited to local filesystems.
   */
  watchDir = async (req: FastifyRequest, msg: Message, ctx: StreamContext): Promise<void> => {
    const { rec, user } = await this.#call(req);
    const root = userPath(msg.path, user);
    const watch = await this.files.openWatch(rec, root, msg.recursive === true, user);
    ctx.send({ start: {} });
    let error: string | undefined;
    const events = this.#eventsOf(rec, root, user, msg.includeEntry === true);
    await this.files.streamWatch(
      watch,
      (ev) => {
        if (ev.finished) error = ev.error;
        events.add(ev, (fs) => ctx.send({ filesystem: fs }));
      },
      ctx.signal,
    );
    await events.sent();
    if (error) throw new ConnectError('internal', error);
  };

  /** Turns Sandpit's watch events into envd's, with their entries when asked (a stat each, kept in order). */
  #eventsOf(rec: SandboxRecord, root: string, user: string, withEntry: boolean) {
    let chain = Promise.resolve();
    return {
      add: (ev: WatchEvent, send: (fs: Message) => void) => {
        const out = fsEvents(root, ev);
        if (out.length === 0) return;
        if (!withEntry) {
          for (const fs of out) send(fs);
          return;
        }
        const path = ev.path!;
        chain = chain.then(async () => {
          // Best effort, as envd's: a path already gone (removed, renamed away) has no entry.
          const stat = await this.files.stat(rec, path, user).catch(() => undefined);
          const entry = stat && (await this.#entries(rec, [stat]))[0];
          for (const fs of out) send(entry ? { ...fs, entry } : fs);
        });
      },
      sent: () => chain,
    };
  }

  /** The polling watcher (the Python SDK's): events are gathered here until fetched. */
  createWatcher = async (req: FastifyRequest, msg: Message): Promise<Message> => {
    const { rec, user } = await this.#call(req);
    const root = userPath(msg.path, user);
    const watch = await this.files.openWatch(rec, root, msg.recursive === true, user);
    const id = randomUUID();
    const w: PollingWatcher = { sandboxId: rec.id, events: [], stop: new AbortController() };
    this.#watchers.set(id, w);
    const events = this.#eventsOf(rec, root, user, msg.includeEntry === true);
    void this.files
      .streamWatch(
        watch,
        (ev) => {
          if (ev.finished && ev.error) w.error = ev.error;
          events.add(ev, (fs) => {
            w.events.push(fs);
            if (w.events.length > WATCHER_BACKLOG) w.events.splice(0, w.events.length - WATCHER_BACKLOG);
          });
        },
        w.stop.signal,
      )
      .catch((err: unknown) => (w.error = String(err)));
    return { watcherId: id };
  };

  getWatcherEvents = async (req: FastifyRequest, msg: Message): Promise<Message> => {
    const { rec } = await this.#call(req);
    const w = this.#watcher(rec, msg.watcherId);
    const events = w.events;
    w.events = [];
    if (events.length === 0 && w.error) throw new ConnectError('internal', w.error);
    return { events };
  };

  removeWatcher = async (req: FastifyRequest, msg: Message): Promise<Message> => {
    const { rec } = await this.#call(req);
    const w = this.#watcher(rec, msg.watcherId);
    w.stop.abort();
    this.#watchers.delete(String(msg.watcherId));
    return {};
  };

  #watcher(rec: SandboxRecord, id: unknown): PollingWatcher {
    const w = typeof id === 'string' ? this.#watchers.get(id) : undefined;
    if (!w || w.sandboxId !== rec.id) throw new ConnectError('not_found', `watcher '${String(id).slice(0, 64)}' not found`);
    return w;
  }

  /** Stops every polling watcher (server shutdown). */
  close(): void {
    for (const w of this.#watchers.values()) w.stop.abort();
    this.#watchers.clear();
  }
}
