import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exists, readJson } from '../../optional-files.ts';
import { checkId, type SnapshotManifest, type SnapshotTransfer, type TemplateFiles } from '../driver.ts';
import { runCaptured } from '../host/posix-spawn.ts';
import { type TreeFile, treeManifest, verifyTree } from '../tree-transfer.ts';
import type { DriverState } from './driver-state.ts';
import { removeTree } from './layer-copies.ts';
import { snapshotPaths } from './paths.ts';
import { removeSnapshotFiles, type SnapshotMeta } from './snapshots.ts';

/** A gVisor snapshot travels as two parts: its directory (metadata and frozen layer) and its checkpoint image. */
const PARTS = ['dir', 'image'] as const;
type Part = (typeof PARTS)[number];

export function gvisorSnapshotTransfer(st: DriverState): SnapshotTransfer {
  const partDir = (snapshotId: string, part: string): string => {
    checkId(snapshotId);
    const snap = snapshotPaths(st.paths, snapshotId);
    if (part === 'dir') return snap.dir;
    if (part === 'image') return snap.image;
    throw new Error(`a snapshot has no part ${JSON.stringify(part)}`);
  };
  return {
    manifest: async (snapshotId) => {
      const snap = snapshotPaths(st.paths, snapshotId);
      checkId(snapshotId);
      if (!(await exists(snap.meta)) || !(await exists(snap.image))) return undefined;
      const [dir, image] = await Promise.all([treeManifest(snap.dir), treeManifest(snap.image)]);
      return { dir, image };
    },
    partDir,
    receive: (snapshotId, manifest, fetch, relocate) => {
      checkId(snapshotId);
      return st.mutex.run(`snapshot-${snapshotId}`, () => receive(st, snapshotId, manifest, fetch, relocate));
    },
  };
}

async function receive(
  st: DriverState,
  snapshotId: string,
  manifest: SnapshotManifest,
  fetch: (part: Part, dest: string, files: TreeFile[]) => Promise<void>,
  relocate: (t: TemplateFiles) => Promise<TemplateFiles>,
): Promise<void> {
  const snap = snapshotPaths(st.paths, snapshotId);
  if (await exists(snap.meta)) return;
  const [dirFiles, imageFiles] = [manifest.dir, manifest.image];
  if (!dirFiles || !imageFiles) throw new Error(`the manifest of snapshot ${snapshotId} lacks a part`);
  await Promise.all([removeTree(snap.partial), rm(snap.imagePartial, { recursive: true, force: true })]);
  try {
    await Promise.all([mkdir(snap.partial, { recursive: true }), mkdir(snap.imagePartial, { recursive: true })]);
    // Forks thaw the layer by a subvolume snapshot on btrfs, so it must be a subvolume, as a captured one is.
    const layer = join(snap.partial, 'layer');
    if (st.layers.quotas) await runCaptured('btrfs', ['subvolume', 'create', layer]);
    await Promise.all([fetch('dir', snap.partial, dirFiles), fetch('image', snap.imagePartial, imageFiles)]);
    await Promise.all([verifyTree(snap.partial, dirFiles), verifyTree(snap.imagePartial, imageFiles)]);
    const sm = await readJson<SnapshotMeta>(join(snap.partial, 'snapshot.json'));
    if (!sm) throw new Error(`snapshot ${snapshotId} arrived without its metadata`);
    const t = await relocate({ root: sm.templateRoot, layers: sm.templateLayers ?? [] });
    await writeFile(join(snap.partial, 'snapshot.json'), JSON.stringify({ ...sm, templateRoot: t.root, templateLayers: t.layers }));
    if (st.layers.quotas) await runCaptured('btrfs', ['property', 'set', '-ts', layer, 'ro', 'true']);
    // As a capture does: the image first, the directory (which makes it a snapshot) last.
    await rename(snap.imagePartial, snap.image);
    await rename(snap.partial, snap.dir);
  } catch (err) {
    await removeSnapshotFiles(snap).catch(() => undefined);
    throw err;
  }
}
