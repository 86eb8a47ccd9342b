import { posix } from 'node:path';
import { badRequest } from '../../errors.ts';
import { isUuid } from '../../ids.ts';
import type { VolumeMount } from '../../schemas/volume.ts';

/** Where the platform mounts its own things, or the kernel's: a volume may not cover them. */
const RESERVED = ['/proc', '/sys', '/dev', '/run/sandpit', '/.sandpit', '/etc/resolv.conf', '/etc/hosts', '/etc/hostname'];

/** A name that could be read as an id would make `{id_or_name}` ambiguous. */
export function checkVolumeName(name: string): void {
  if (isUuid(name)) throw badRequest('a volume name cannot be a UUID');
}

/**
 * Checks mount paths: absolute and normalized (no `..`, `.`, `//` or trailing `/`), not the root nor
 * the platform's or kernel's mounts, none twice. Symlinks are not resolved here: the engine places
 * the mount without following them (docs/volumes.md).
 */
export function checkMountPaths(mounts: readonly VolumeMount[]): void {
  const seen = new Set<string>();
  for (const { path } of mounts) {
    const shown = JSON.stringify(path.slice(0, 128));
    if (!path.startsWith('/') || posix.normalize(path) !== path || path.endsWith('/') || path.split('/').includes('..')) {
      throw badRequest(`volume mount path ${shown} must be absolute and normalized (no '..', '.', '//' or trailing '/')`);
    }
    if (/[\0\n\\,:]/.test(path)) throw badRequest(`volume mount path ${shown} holds a character a mount cannot take`);
    if (RESERVED.some((r) => path === r || path.startsWith(`${r}/`))) throw badRequest(`volume mount path ${shown} is reserved by the platform`);
    if (seen.has(path)) throw badRequest(`volume mount path ${shown} is given twice`);
    seen.add(path);
  }
}
