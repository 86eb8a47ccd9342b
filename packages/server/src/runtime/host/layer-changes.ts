import { lstatSync, readdirSync, readlinkSync, type Stats } from 'node:fs';
import { libc } from './libc.ts';

const lgetxattr = libc.func('long lgetxattr(const char *path, const char *name, _Out_ uint8_t *value, size_t size)');

export type ChangeKind = 'added' | 'modified' | 'deleted';
export type ChangeType = 'file' | 'dir' | 'symlink' | 'other';

/** One path whose content differs from the base: `size` is the new size (the old one for a deletion; 0 but for files). */
export interface LayerChange {
  /** Absolute inside the sandbox. */
  path: string;
  kind: ChangeKind;
  type: ChangeType;
  size: number;
}

/** A sandbox's writable layer and what it started from. */
export interface LayerBase {
  /** The overlay upper dir: everything the sandbox wrote. */
  upper: string;
  /** Read-only template layers below it, top first. */
  lowers: string[];
  /** The upper dir of the snapshot the sandbox was forked from (its layer started as a copy of it). */
  snapshotUpper?: string;
}

/**
 * The changes a sandbox's layer holds against its base, sorted by path, limited to `under` (an
 * absolute path) and what lies beneath it. Overlayfs marks a deletion with a whiteout (a 0/0
 * character device) and a directory removed and made again as opaque. A fork's base is its
 * snapshot's upper above the template: entries it kept as they were (same type, size, mode and
 * mtime, which the layer copy preserves) are no change. Synchronous on purpose: tens of thousands
 * of lstat calls through the thread pool cost several times as much.
 */
export function layerChanges(base: LayerBase, under = '/'): LayerChange[] {
  const view = new BaseView(base.snapshotUpper ? [base.snapshotUpper, ...base.lowers] : base.lowers, !!base.snapshotUpper);
  const out: LayerChange[] = [];
  const start = under.replace(/\/+$/, '');
  if (start === '') walkUpper(base.upper, '', view, false, out);
  else if (realAncestors(base.upper, start)) {
    const st = lstatOrUndefined(base.upper + start);
    if (st) classify(base.upper, start, st, view, underOpaque(base.upper, start), out);
  }
  if (base.snapshotUpper) dropsFromSnapshot(base, start, view, out);
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function walkUpper(upper: string, rel: string, view: BaseView, opaque: boolean, out: LayerChange[]): void {
  for (const name of readdirSync(upper + rel || '/')) {
    const child = `${rel}/${name}`;
    classify(upper, child, lstatSync(upper + child), view, opaque, out);
  }
}

/** `opaque`: an ancestor is opaque, so nothing of the base shows below it unless the layer holds it. */
function classify(upper: string, rel: string, st: Stats, view: BaseView, opaque: boolean, out: LayerChange[]): void {
  const was = view.lookup(rel);
  if (isWhiteout(st)) {
    if (was) out.push(change(rel, 'deleted', was.st));
    return;
  }
  if (st.isDirectory()) {
    const hides = opaque || isOpaque(upper + rel);
    if (!was?.st.isDirectory()) out.push(change(rel, was ? 'modified' : 'added', st));
    else if (hides) {
      const kept = new Set(readdirSync(upper + rel));
      for (const [name, gone] of view.entries(rel)) if (!kept.has(name)) out.push(change(`${rel}/${name}`, 'deleted', gone));
    }
    walkUpper(upper, rel, view, hides, out);
    return;
  }
  if (was?.fromSnapshot && sameEntry(was.st, st) && (!st.isSymbolicLink() || readlinkSync(upper + rel) === readlinkSync(was.abs))) return;
  out.push(change(rel, was ? 'modified' : 'added', st));
}

/** What a fork removed of its snapshot's own files: gone without a whiteout, since nothing was below them. */
function dropsFromSnapshot(base: LayerBase, start: string, view: BaseView, out: LayerChange[]): void {
  const snap = base.snapshotUpper!;
  const check = (rel: string, st: Stats): void => {
    if (isWhiteout(st)) return;
    const now = lstatOrUndefined(base.upper + rel);
    if (!now) {
      const below = view.lookup(rel, 1);
      out.push(below ? change(rel, 'modified', below.st) : change(rel, 'deleted', st));
    } else if (st.isDirectory() && now.isDirectory() && !isOpaque(base.upper + rel)) {
      for (const name of readdirSync(snap + rel)) check(`${rel}/${name}`, lstatSync(`${snap}${rel}/${name}`));
    }
  };
  if (start === '') {
    for (const name of readdirSync(snap)) check(`/${name}`, lstatSync(`${snap}/${name}`));
    return;
  }
  const top = realAncestors(snap, start) && realAncestors(base.upper, start) ? lstatOrUndefined(snap + start) : undefined;
  if (top) check(start, top);
}

/** The layer whose file `path` (absolute in the sandbox) is in the base, if the base has one there. */
export function baseLayerOf(base: LayerBase, path: string): string | undefined {
  const found = new BaseView(base.snapshotUpper ? [base.snapshotUpper, ...base.lowers] : base.lowers, !!base.snapshotUpper).lookup(path);
  return found?.layer;
}

function change(path: string, kind: ChangeKind, st: Stats): LayerChange {
  return { path, kind, type: typeOf(st), size: st.isFile() ? st.size : 0 };
}

function underOpaque(upper: string, rel: string): boolean {
  for (let i = rel.indexOf('/', 1); i > 0; i = rel.indexOf('/', i + 1)) if (isOpaque(upper + rel.slice(0, i))) return true;
  return false;
}

interface Found {
  /** The layer holding it. */
  layer: string;
  abs: string;
  st: Stats;
  /** Found in the snapshot's upper: an identical entry in the fork's layer is no change. */
  fromSnapshot: boolean;
}

/** How a directory stands in one layer: `blocked` when an ancestor is no directory (a file, symlink or whiteout hides what is below). */
interface DirState {
  kind: 'dir' | 'missing' | 'blocked';
  /** It or an ancestor is opaque here: layers below do not show through. */
  opaque: boolean;
}

const ROOT_DIR: DirState = { kind: 'dir', opaque: false };

/**
 * The read-only view below the writable layer, resolved as overlayfs does. A path is looked up in
 * a layer only when each of its ancestors there is a real directory, so a symlink in a layer is
 * never followed on the host.
 */
class BaseView {
  readonly #layers: string[];
  readonly #snapshotFirst: boolean;
  readonly #dirs: Map<string, DirState>[];

  constructor(layers: string[], snapshotFirst: boolean) {
    this.#layers = layers;
    this.#snapshotFirst = snapshotFirst;
    this.#dirs = layers.map(() => new Map());
  }

  /** The entry at `rel`, looking from layer `from` down. */
  lookup(rel: string, from = 0): Found | undefined {
    const parent = rel.slice(0, rel.lastIndexOf('/'));
    for (let i = from; i < this.#layers.length; i++) {
      const d = this.#dir(i, parent);
      if (d.kind === 'blocked') return undefined;
      if (d.kind === 'dir') {
        const st = lstatOrUndefined(this.#layers[i] + rel);
        if (st) return isWhiteout(st) ? undefined : { layer: this.#layers[i]!, abs: this.#layers[i] + rel, st, fromSnapshot: i === 0 && this.#snapshotFirst };
      }
      if (d.opaque) return undefined;
    }
    return undefined;
  }

  /** Directory `rel`'s entries in the view. */
  entries(rel: string): Map<string, Stats> {
    const seen = new Map<string, Stats | null>();
    for (let i = 0; i < this.#layers.length; i++) {
      const d = this.#dir(i, rel);
      if (d.kind === 'blocked') break;
      if (d.kind === 'dir') {
        for (const name of readdirSync(this.#layers[i] + rel)) {
          if (seen.has(name)) continue;
          const st = lstatSync(`${this.#layers[i]}${rel}/${name}`);
          seen.set(name, isWhiteout(st) ? null : st);
        }
      }
      if (d.opaque) break;
    }
    const out = new Map<string, Stats>();
    for (const [name, st] of seen) if (st) out.set(name, st);
    return out;
  }

  #dir(i: number, rel: string): DirState {
    if (rel === '') return ROOT_DIR;
    let d = this.#dirs[i]!.get(rel);
    if (d) return d;
    const up = this.#dir(i, rel.slice(0, rel.lastIndexOf('/')));
    if (up.kind !== 'dir') d = up;
    else {
      const st = lstatOrUndefined(this.#layers[i] + rel);
      if (!st) d = { kind: 'missing', opaque: up.opaque };
      else if (!st.isDirectory()) d = { kind: 'blocked', opaque: up.opaque };
      else d = { kind: 'dir', opaque: up.opaque || isOpaque(this.#layers[i] + rel) };
    }
    this.#dirs[i]!.set(rel, d);
    return d;
  }
}

/** Whether each ancestor of `rel` in `root` is a real directory (no symlink on the way leads out of it). */
function realAncestors(root: string, rel: string): boolean {
  for (let i = rel.indexOf('/', 1); i > 0; i = rel.indexOf('/', i + 1)) if (!lstatOrUndefined(root + rel.slice(0, i))?.isDirectory()) return false;
  return true;
}

function sameEntry(a: Stats, b: Stats): boolean {
  return a.mode === b.mode && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

function isWhiteout(st: Stats): boolean {
  return st.isCharacterDevice() && st.rdev === 0;
}

const OPAQUE = Buffer.alloc(1);

function isOpaque(dir: string): boolean {
  return Number(lgetxattr(dir, 'trusted.overlay.opaque', OPAQUE, 1)) === 1 && OPAQUE[0] === 0x79; // 'y'
}

function lstatOrUndefined(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

function typeOf(st: Stats): ChangeType {
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'dir';
  if (st.isSymbolicLink()) return 'symlink';
  return 'other';
}
