import { closeSync, openSync } from 'node:fs';
import { basename, dirname } from 'node:path';

/** The longest path `sockaddr_un` holds (108 bytes with its terminating NUL). */
const SUN_PATH_MAX = 107;

export interface SocketName {
  /** What to bind or connect to. */
  name: string;
  /** Closes what keeps `name` valid; a listening socket's only after it is closed (libuv unlinks its name then). */
  release(): void;
}

/**
 * A name for the unix socket at `path` that bind and connect accept whatever the data directory's
 * length: a path too long is reached through /proc/self/fd of its directory, kept open until released.
 */
export function socketName(path: string): SocketName {
  if (Buffer.byteLength(path) <= SUN_PATH_MAX) return { name: path, release: () => undefined };
  const dir = openSync(dirname(path), 'r');
  let open = true;
  return {
    name: `/proc/self/fd/${dir}/${basename(path)}`,
    release: () => {
      if (open) closeSync(dir);
      open = false;
    },
  };
}
