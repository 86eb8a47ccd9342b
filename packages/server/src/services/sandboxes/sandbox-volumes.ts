import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { badRequest, unavailable } from '../../errors.ts';
import type { BindMount } from '../../runtime/driver.ts';
import type { CreateSandboxBody } from '../../schemas/sandbox.ts';
import type { VolumeService } from '../volumes/volumes.ts';

/** Whether a create asks for volumes (then it boots: warm and captured sandboxes were started without them). */
export function wantsVolumes(body: CreateSandboxBody): boolean {
  return (body.volumes?.length ?? 0) > 0;
}

/**
 * The bind mounts of sandbox `id`'s volumes: those the body names, or for a fork those its snapshot's
 * sandbox mounted. Recorded before the engine starts; `volumes.release(id)` undoes it on failure.
 */
export async function volumeMounts(volumes: VolumeService | undefined, teamId: string, id: string, body: CreateSandboxBody, lowers: string[]): Promise<BindMount[]> {
  if (body.from_snapshot !== undefined) {
    if (wantsVolumes(body)) throw badRequest('a fork mounts the volumes its snapshot recorded; volumes cannot be given with from_snapshot');
    return volumes ? volumes.forkMounts(teamId, id, body.from_snapshot) : [];
  }
  if (!wantsVolumes(body)) return [];
  if (!volumes) throw unavailable('this host keeps no volumes');
  for (const m of body.volumes ?? []) await checkInTemplate(m.path, lowers);
  return volumes.attach(teamId, id, body.volumes ?? []);
}

/**
 * Refuses, as bad input, a mount path that goes through a symlink or a file of the template (top
 * layer first, as the overlay shows it). The engine checks again where it mounts; this answers 400
 * instead of a failed create.
 */
async function checkInTemplate(path: string, lowers: string[]): Promise<void> {
  let rel = '';
  for (const part of path.split('/').filter(Boolean)) {
    rel = join(rel, part);
    let found = false;
    for (const layer of lowers) {
      const st = await lstat(join(layer, rel)).catch(() => undefined);
      if (!st) continue;
      if (st.isSymbolicLink()) throw badRequest(`volume mount path ${path} goes through /${rel}, a symlink in the template; give a path without one`);
      if (!st.isDirectory()) throw badRequest(`volume mount path ${path} goes through /${rel}, a file of the template`);
      found = true;
      break;
    }
    if (!found) return;
  }
}
