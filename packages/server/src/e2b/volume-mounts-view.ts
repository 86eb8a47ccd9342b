import type { Principal } from '../services/access/principal.ts';
import type { VolumeService } from '../services/volumes/volumes.ts';

/** E2B's SandboxVolumeMount. */
export interface E2bVolumeMount {
  name: string;
  path: string;
}

/**
 * The mounts of these sandboxes as E2B's SandboxVolumeMount lists, by sandbox id (by volume name; a
 * volume deleted since is left out). One query for all mounts, one look-up per volume.
 */
export async function volumeMountsView(volumes: VolumeService | undefined, p: Principal, sandboxIds: readonly string[]): Promise<Map<string, E2bVolumeMount[]>> {
  const out = new Map<string, E2bVolumeMount[]>(sandboxIds.map((id) => [id, []]));
  if (!volumes) return out;
  const mounts = await volumes.mountsOf(sandboxIds);
  const names = new Map<string, string | undefined>();
  for (const id of new Set(mounts.map((m) => m.volumeId))) names.set(id, (await volumes.get(p, id).catch(() => undefined))?.name);
  for (const m of mounts) {
    const name = names.get(m.volumeId);
    if (name !== undefined) out.get(m.sandboxId)?.push({ name, path: m.path });
  }
  return out;
}
