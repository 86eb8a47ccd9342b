import { mkdir, rename, rm } from 'node:fs/promises';
import { exists } from '../../optional-files.ts';
import { checkId, type FetchPart, type MoveTarget, type SandboxManifest, type SandboxMoves } from '../driver.ts';
import { treeManifest, verifyTree } from '../tree-transfer.ts';
import type { DriverState } from './driver-state.ts';
import { destroyLocked } from './lifecycle.ts';
import { captureNet } from './netns.ts';
import { gvisorSandboxPaths } from './paths.ts';
import { readMeta, type SandboxMeta, writeMeta } from './sandbox-meta.ts';

/**
 * A paused gVisor sandbox travels as its checkpoint image and its writable layer (upper and work
 * dirs); its record goes with the manifest. On the receiving node it is paused as it was, with this
 * node's namespace, addresses and mounts in its record, so the next resume restores it here. One paused
 * keeping only its disk travels as its layer alone, and the next resume boots it here.
 */
export function gvisorSandboxMoves(st: DriverState): SandboxMoves {
  return {
    manifest: (id) => {
      checkId(id);
      return st.mutex.run(id, async () => {
        const sp = gvisorSandboxPaths(st.paths, id);
        const meta = await readMeta(sp.meta);
        if (!meta) return undefined;
        const template = { root: meta.templateRoot, layers: meta.templateLayers ?? [] };
        // Paused keeping only its disk: the layer is all there is, and the target boots it.
        if (meta.stopped) {
          const files: SandboxManifest['files'] = { layer: await treeManifest(st.layers.dir(id)) };
          return { files, template, meta };
        }
        if (!(await exists(sp.image))) return undefined;
        const [image, layer] = await Promise.all([treeManifest(sp.image), treeManifest(st.layers.dir(id))]);
        return { files: { image, layer }, template, meta };
      });
    },
    partDir: (id, part) => {
      checkId(id);
      if (part === 'image') return gvisorSandboxPaths(st.paths, id).image;
      if (part === 'layer') return st.layers.dir(id);
      throw new Error(`a sandbox has no part ${JSON.stringify(part)}`);
    },
    receive: (target, manifest, fetch) => {
      checkId(target.id);
      return st.mutex.run(target.id, () => receive(st, target, manifest, fetch));
    },
  };
}

async function receive(st: DriverState, target: MoveTarget, manifest: SandboxManifest, fetch: FetchPart): Promise<void> {
  const id = target.id;
  const meta = manifest.meta as SandboxMeta;
  const { image, layer } = manifest.files;
  if (meta?.id !== id || !layer || (!image && !meta.stopped)) throw new Error(`the manifest of sandbox ${id} is not one of a paused gvisor sandbox`);
  if (!!meta.netnsPath !== !!target.netnsPath) throw new Error(`sandbox ${id} ran ${meta.netnsPath ? 'with' : 'without'} a network namespace; the move target must too`);
  const sp = gvisorSandboxPaths(st.paths, id);
  if (await exists(sp.dir)) throw new Error(`sandbox ${id} already exists on this node`);
  try {
    await Promise.all([mkdir(sp.runDir, { recursive: true }).then(() => mkdir(sp.rootfs)), rm(sp.partial, { recursive: true, force: true }).then(() => mkdir(sp.partial, { recursive: true }))]);
    const { ready, capped } = st.layers.acquire(id, meta.resources.diskMib);
    const t = target.template;
    const [subvolId, net] = await Promise.all([
      capped,
      target.netnsPath ? (target.netConfig ?? captureNet(target.netnsPath)) : undefined,
      ready.then(() => fetch('layer', st.layers.dir(id), layer)),
      image && fetch('image', sp.partial, image),
    ]);
    await Promise.all([verifyTree(st.layers.dir(id), layer), image && verifyTree(sp.partial, image)]);
    if (image) await rename(sp.partial, sp.image);
    else await rm(sp.partial, { recursive: true, force: true });
    const { netnsPath: _n, net: _c, mounts: _m, templateLayers: _l, ...own } = meta;
    await writeMeta(sp.meta, {
      ...own,
      templateRoot: t.root,
      ...(t.layers.length ? { templateLayers: t.layers } : {}),
      ...(target.netnsPath ? { netnsPath: target.netnsPath, net } : {}),
      ...(target.mounts ? { mounts: target.mounts } : {}),
      subvolId,
    });
  } catch (err) {
    await destroyLocked(st, id).catch((e: Error) => st.logger.warn(`cleanup after failed move of ${id}: ${e.message}`));
    throw new Error(`receiving sandbox ${id} failed: ${(err as Error).message}`);
  } finally {
    st.layers.replenish();
  }
}
