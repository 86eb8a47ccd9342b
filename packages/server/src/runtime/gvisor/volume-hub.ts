import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { BindMount } from '../driver.ts';
import { listMounts } from '../host/mounts.ts';
import { attachTree, mountInto, volumesOuterFirst, volumeTree } from '../host/volume-binds.ts';
import { type DriverState, runscOf } from './driver-state.ts';
import { channel } from './launch.ts';
import { gvisorSandboxPaths } from './paths.ts';
import { readMeta, writeMeta } from './sandbox-meta.ts';

/**
 * Where every run since the hub was introduced mounts its sandbox's hub directory (`<sandbox>/volumes`).
 * runsc cannot add a mount to a running sandbox, and a capture must be restored with exactly the
 * mounts it was taken with, so a volume given to a running sandbox (a create restoring its template's
 * capture) comes through the hub: slot `<i>` of the hub, then bound by the agent where it was asked.
 */
export const VOLUME_HUB_IN_SANDBOX = '/.sandpit/volumes';

/**
 * The hub's OCI mount. Recursive, so the volumes bound under it on the host before a run starts (a
 * restore of a sandbox that had them) come along; not the root, so the gofer serves it shared and
 * writes of other sandboxes to a volume are seen at once, as for a volume mounted at create.
 */
export function hubConfigMount(hub: string): object {
  return { destination: VOLUME_HUB_IN_SANDBOX, type: 'bind', source: hub, options: ['rbind', 'rw', 'nosuid', 'nodev'] };
}

/**
 * Makes the hub directory and binds on the host, slot `i` at `<hub>/<i>`, each of `mounts` not bound
 * yet (a host restart unmounted them): before a run starts or restores with them.
 */
export async function mountHubVolumes(hub: string, mounts: readonly BindMount[] | undefined): Promise<void> {
  await mkdir(hub, { recursive: true });
  if (!mounts?.length) return;
  const bound = new Set((await listMounts()).map((e) => e.mountPoint));
  for (const [i, m] of mounts.entries()) if (!bound.has(join(hub, String(i)))) await bindSlot(hub, i, m);
}

/** Binds volume `m` on the host at slot `i` of the hub. */
async function bindSlot(hub: string, i: number, m: BindMount): Promise<void> {
  const at = join(hub, String(i));
  await mkdir(at, { recursive: true });
  attachTree(volumeTree(m, undefined), at, m.destination);
}

/**
 * Gives running sandbox `id` the volumes among `mounts`. For each: a slot of the hub bound on the
 * host (for later restores), the same volume attached in the gofer's own view of the hub (a private
 * copy of the host's, taken when the run started) by the helper that enters its namespace, then the
 * agent binds the slot at the volume's path, read-only when asked (both the host's mount and the
 * sandbox's are). Recorded in the meta (`hubMounts`), so pauses, snapshots and forks keep them.
 * The caller holds the sandbox's lock.
 */
export async function attachToRun(st: DriverState, id: string, mounts: readonly BindMount[]): Promise<void> {
  const sp = gvisorSandboxPaths(st.paths, id);
  const meta = await readMeta(sp.meta);
  if (!meta) throw new Error(`sandbox ${id} not found`);
  if (!meta.volumeHub) throw new Error(`sandbox ${id} runs without a volume hub (started before there was one) and cannot take volumes while it runs`);
  const runsc = runscOf(st, meta);
  const gofer = await runsc.goferPid(meta.runscId);
  if (!gofer) throw new Error(`sandbox ${id} is not running`);
  const ch = channel(st, id);
  if (!ch.control) {
    await ch.open();
    await ch.ready(st.opts.readyTimeoutMs ?? 15_000, async () => (await runsc.state(meta.runscId))?.status === 'running');
  }
  const hubMounts = [...(meta.hubMounts ?? [])];
  for (const m of volumesOuterFirst(mounts)) {
    const slot = hubMounts.push(m) - 1;
    await bindSlot(sp.hub, slot, m);
    await mountInto(st.opts.agentBinary, gofer, `${VOLUME_HUB_IN_SANDBOX}/${slot}`, 0, volumeTree(m, undefined));
    await ch.control!.mount(`${VOLUME_HUB_IN_SANDBOX}/${slot}`, m.destination, !!m.volume?.readOnly);
  }
  await writeMeta(sp.meta, { ...meta, hubMounts });
}
