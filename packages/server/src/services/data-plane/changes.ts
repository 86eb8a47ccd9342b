import { closeSync, constants, createReadStream, fstatSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { ApiError, badRequest, conflict, notFound, unavailable } from '../../errors.ts';
import type { WritableLayer } from '../../runtime/driver.ts';
import { Beneath } from '../../runtime/host/beneath.ts';
import { baseLayerOf, type LayerChange, layerChanges } from '../../runtime/host/layer-changes.ts';
import type { ApplyResult, Change } from '../../schemas/changes.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';
import { SANDBOX_USER } from '../../templates/sandbox-user.ts';
import type { SandboxService } from '../sandboxes/sandboxes.ts';
import type { FileService } from './files.ts';

/**
 * Files the platform writes into every sandbox's layer (its names, resolver, the egress CA's mount point,
 * what keeps a gVisor sandbox's /tmp on its disk: runtime/gvisor/tmp-on-disk.ts): not the sandbox's changes.
 */
const PLATFORM_FILES = new Set(['/etc/hostname', '/etc/hosts', '/etc/resolv.conf', '/usr/local/share/ca-certificates/sandpit-egress-ca.crt', '/tmp/.sandpit-tmp-on-disk']);
/** Mount points the engines make in the layer for what they bind in; /proc and /sys are always mounted over. */
const PLATFORM_DIRS = ['/.sandpit', '/run/sandpit', '/proc', '/sys'];
/** Files larger than this are not diffed (the diff is built in memory). */
const DIFF_MAX = 4 * 1024 * 1024;
/** A listing's later pages (asked with a cursor) within this long of its first come from the first's walk, not a new one. */
const PAGES_KEPT_MS = 30_000;
/** Listings kept for their later pages, the oldest dropped first. */
const LISTINGS_KEPT = 16;

/** What a layer starts from, comparable between hosts: the snapshot it was forked from, and its template layers by content key. */
export interface LayerIdentity {
  snapshotId?: string;
  lowers: string[];
}

/** Sandboxes whose layers are on other nodes (several hosts): an apply from one fetches its layer. */
export interface RemoteLayers {
  /** Whether the sandbox's layer is on another node. */
  elsewhere(rec: SandboxRecord): boolean;
  /** A copy of the sandbox's writable layer (its upper dir) on this host, with what it started from; `dispose` removes it. */
  fetch(rec: SandboxRecord): Promise<{ upper: string; base: LayerIdentity; dispose: () => Promise<void> }>;
}

export interface ChangesPage {
  base: { kind: 'template' | 'snapshot'; id: string };
  items: Change[];
  nextCursor?: string;
}

/**
 * What a sandbox changed in its writable layer against its base (template, or the snapshot it was
 * forked from), read on the host from the engine's overlay layers; and copying one sandbox's
 * changes into another of the same base through the target's agent, so a running sandbox sees
 * them at once on either engine and each file lands whole (the agent names it only when written).
 */
export class SandboxChanges {
  readonly #sandboxes: SandboxService;
  readonly #files: FileService;
  readonly #remote: RemoteLayers | undefined;
  /** Walks of recent first pages, by sandbox and path: paging through 10,000 changes walks the layer once. */
  readonly #listings = new Map<string, { at: number; all: LayerChange[] }>();

  constructor(sandboxes: SandboxService, files: FileService, remote?: RemoteLayers) {
    this.#sandboxes = sandboxes;
    this.#files = files;
    this.#remote = remote;
  }

  async list(rec: SandboxRecord, q: { path?: string; limit?: string; cursor?: string }): Promise<ChangesPage> {
    const limit = q.limit === undefined ? 100 : Number(q.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw badRequest('limit must be an integer from 1 to 1000');
    const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
    const layer = await this.#layer(rec);
    const all = this.#listing(rec, layer, q.path === undefined ? '/' : absolute(q.path), after !== undefined);
    let from = 0;
    if (after !== undefined) {
      // Sorted by path: binary search for the first path after the cursor.
      let hi = all.length;
      while (from < hi) {
        const mid = (from + hi) >> 1;
        if (all[mid]!.path <= after) from = mid + 1;
        else hi = mid;
      }
    }
    const items = all.slice(from, from + limit);
    const more = from + limit < all.length;
    return { base: baseOf(rec, layer), items, ...(more ? { nextCursor: Buffer.from(items.at(-1)!.path).toString('base64url') } : {}) };
  }

  /**
   * The changes under `under`: a first page walks the layer; a later page reuses that walk while it is
   * recent, so the pages of one listing are of one moment (a change made meanwhile shows from the next listing).
   */
  #listing(rec: SandboxRecord, layer: WritableLayer, under: string, later: boolean): LayerChange[] {
    const key = `${rec.id}\0${under}`;
    const now = Date.now();
    const kept = this.#listings.get(key);
    if (later && kept && now - kept.at < PAGES_KEPT_MS) return kept.all;
    const all = changesOf(layer, under);
    this.#listings.delete(key);
    this.#listings.set(key, { at: now, all });
    for (const [k, v] of this.#listings) if (this.#listings.size > LISTINGS_KEPT || now - v.at >= PAGES_KEPT_MS) this.#listings.delete(k);
    return all;
  }

  /** A unified diff of one changed text file against its base version. */
  async diff(rec: SandboxRecord, raw: string): Promise<string> {
    const path = absolute(raw);
    const layer = await this.#layer(rec);
    const c = changesOf(layer, path).find((x) => x.path === path);
    if (!c) throw notFound(`${path} is not changed in this sandbox`);
    if (c.type !== 'file') throw badRequest(`${path} is a ${c.type}, not a file`);
    const before = c.kind === 'added' ? '' : readText(baseLayerOf(layer, path), path);
    const after = c.kind === 'deleted' ? '' : readText(layer.upper, path);
    return createTwoFilesPatch(c.kind === 'added' ? '/dev/null' : `a${path}`, c.kind === 'deleted' ? '/dev/null' : `b${path}`, before, after);
  }

  /**
   * Copies `source`'s changes (those under `paths`, default all) into `target`. A path the target
   * changed too since the common base (the same path, a deleted directory above it, or changes
   * below a directory the source deleted) is a conflict and left alone, unless both made it the same.
   */
  async apply(target: SandboxRecord, source: SandboxRecord, paths: string[] | undefined): Promise<ApplyResult> {
    if (target.id === source.id) throw badRequest('from names this same sandbox');
    const here = await this.#layer(target);
    const from = await this.#sourceLayer(source, here);
    try {
      if (!sameIdentity(from.base, layerIdentity(here)))
        throw conflict('the sandboxes have different bases (template, template version or snapshot); changes apply only between sandboxes of the same base');
      return await this.#applyFrom(from.layer, here, target, paths);
    } finally {
      await from.dispose?.();
    }
  }

  /**
   * The source's layer and what it starts from: on this host as it is; on another node, its upper
   * copied here and set on this sandbox's base (which apply then checks is the same as the source's).
   */
  async #sourceLayer(source: SandboxRecord, here: WritableLayer): Promise<{ layer: WritableLayer; base: LayerIdentity; dispose?: () => Promise<void> }> {
    if (!this.#remote?.elsewhere(source)) {
      const layer = await this.#layer(source);
      return { layer, base: layerIdentity(layer) };
    }
    const copy = await this.#remote.fetch(source);
    return { layer: { ...here, upper: copy.upper }, base: copy.base, dispose: copy.dispose };
  }

  async #applyFrom(there: WritableLayer, here: WritableLayer, target: SandboxRecord, paths: string[] | undefined): Promise<ApplyResult> {
    const wanted = paths?.map(absolute);
    const theirs = changesOf(there, '/').filter((c) => !wanted || wanted.some((p) => within(c.path, p)));
    const ours = changesOf(here, '/');
    const ourPaths = new Map(ours.map((c) => [c.path, c]));
    const result: ApplyResult = { applied: [], conflicts: [], skipped: [] };
    for (const c of theirs) {
      const mine = collision(c, ourPaths, ours);
      if (mine) {
        if (mine.path === c.path && sameChange(c, mine, there, here)) continue;
        result.conflicts.push({ path: c.path, kind: c.kind, here: { path: mine.path, kind: mine.kind } });
        continue;
      }
      if (c.kind !== 'deleted' && c.type !== 'file' && c.type !== 'dir') {
        result.skipped.push({ path: c.path, reason: `a ${c.type}` });
        continue;
      }
      await this.#copy(target, there, c);
      result.applied.push({ path: c.path, kind: c.kind });
    }
    return result;
  }

  async #copy(target: SandboxRecord, there: WritableLayer, c: LayerChange): Promise<void> {
    try {
      if (c.kind === 'deleted') {
        await this.#files.remove(target, c.path, true, 'root').catch((err: ApiError) => {
          if (err.status !== 404) throw err;
        });
      } else if (c.type === 'dir') {
        const fd = openIn(there.upper, c.path);
        const owner = ownerOf(fd);
        closeSync(fd);
        await this.#files.mkdir(target, c.path, true, owner);
      } else {
        const fd = openIn(there.upper, c.path);
        const owner = ownerOf(fd);
        const body = createReadStream('', { fd });
        try {
          await this.#files.upload(target, c.path, body, owner);
        } finally {
          body.destroy();
        }
      }
    } catch (err) {
      if (err instanceof ApiError) throw new ApiError(err.status, err.code, `applying ${c.path}: ${err.message}`);
      throw err;
    }
  }

  async #layer(rec: SandboxRecord): Promise<WritableLayer> {
    const driver = this.#sandboxes.deps.driver;
    if (!driver.writableLayer) throw unavailable("this host's engine does not show sandbox layers");
    const layer = await driver.writableLayer(rec.id);
    if (!layer) throw conflict(`the sandbox is ${rec.status} and its writable layer is not on this host`);
    return layer;
  }
}

function changesOf(layer: WritableLayer, under: string): LayerChange[] {
  return layerChanges(layer, under).filter((c) => !PLATFORM_FILES.has(c.path) && !PLATFORM_DIRS.some((d) => within(c.path, d)));
}

function baseOf(rec: SandboxRecord, layer: WritableLayer): ChangesPage['base'] {
  return layer.snapshotId ? { kind: 'snapshot', id: layer.snapshotId } : { kind: 'template', id: rec.templateId };
}

/** A template layer is `<dir>/<content key>/<root>` on every host: the last two parts name it wherever its files are. */
export function layerIdentity(layer: WritableLayer): LayerIdentity {
  return { ...(layer.snapshotId ? { snapshotId: layer.snapshotId } : {}), lowers: layer.lowers.map((l) => l.split('/').slice(-2).join('/')) };
}

function sameIdentity(a: LayerIdentity, b: LayerIdentity): boolean {
  return a.snapshotId === b.snapshotId && a.lowers.length === b.lowers.length && a.lowers.every((l, i) => l === b.lowers[i]);
}

/** The target's own change that `c` would overwrite or be overwritten by, if any. */
function collision(c: LayerChange, byPath: Map<string, LayerChange>, ours: LayerChange[]): LayerChange | undefined {
  const same = byPath.get(c.path);
  if (same) return same;
  for (let p = posix.dirname(c.path); p !== '/'; p = posix.dirname(p)) {
    const above = byPath.get(p);
    if (above && (above.kind === 'deleted' || above.type !== 'dir')) return above;
  }
  if (c.kind === 'deleted' || c.type !== 'dir') return ours.find((o) => o.path.startsWith(`${c.path}/`));
  return undefined;
}

/** Both sandboxes made the same change: nothing to apply, and no conflict. */
function sameChange(a: LayerChange, b: LayerChange, there: WritableLayer, here: WritableLayer): boolean {
  if (a.kind === 'deleted' || b.kind === 'deleted') return a.kind === b.kind;
  if (a.type !== b.type) return false;
  if (a.type === 'dir') return true;
  if (a.type !== 'file' || a.size !== b.size) return false;
  return readBytes(there.upper, a.path).equals(readBytes(here.upper, b.path));
}

/** Opens `path` (absolute in the sandbox) in a layer, never leaving it. */
function openIn(root: string, path: string): number {
  const b = new Beneath(root);
  try {
    return b.open(path.slice(1), constants.O_RDONLY);
  } finally {
    b.close();
  }
}

/** Who writes the copy: sandbox root for root's files, else the sandbox's user (the data plane runs as one of the two). */
function ownerOf(fd: number): string {
  return fstatSync(fd).uid === 0 ? 'root' : SANDBOX_USER;
}

function readBytes(root: string, path: string): Buffer {
  const fd = openIn(root, path);
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

function readText(root: string | undefined, path: string): string {
  if (!root) return '';
  const bytes = readBytes(root, path);
  if (bytes.length > DIFF_MAX) throw badRequest(`${path} is larger than ${DIFF_MAX} bytes; download it instead`);
  if (bytes.subarray(0, 8192).includes(0)) throw badRequest(`${path} is not a text file`);
  return bytes.toString('utf8');
}

function within(path: string, dir: string): boolean {
  return dir === '/' || path === dir || path.startsWith(`${dir}/`);
}

/** A checked, normalized absolute path. */
function absolute(raw: string): string {
  if (!raw.startsWith('/')) throw badRequest(`path must be absolute: '${raw}'`);
  if (raw.includes('\0')) throw badRequest('path must not contain NUL bytes');
  if (raw.length > 4096) throw badRequest('path is longer than 4096 characters');
  const p = posix.normalize(raw);
  return p.length > 1 ? p.replace(/\/+$/, '') : p;
}

function decodeCursor(c: string): string {
  const p = Buffer.from(c, 'base64url').toString();
  if (!p.startsWith('/')) throw badRequest('invalid cursor');
  return p;
}
