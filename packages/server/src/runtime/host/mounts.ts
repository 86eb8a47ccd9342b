import { readFile } from 'node:fs/promises';
import { runCommand } from './run-command.ts';

export interface MountEntry {
  mountPoint: string;
  fsType: string;
  source: string;
  options: string;
}

/** Undoes the octal escapes (\040 etc.) that mountinfo uses for spaces and the like. */
function unescapeMountinfo(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
}

export async function listMounts(): Promise<MountEntry[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const l = left.split(' ');
    const r = right.split(' ');
    out.push({
      mountPoint: unescapeMountinfo(l[4] ?? ''),
      options: `${l[5] ?? ''},${r[2] ?? ''}`,
      fsType: r[0] ?? '',
      source: unescapeMountinfo(r[1] ?? ''),
    });
  }
  return out;
}

export async function isMountPoint(path: string): Promise<boolean> {
  return (await listMounts()).some((m) => m.mountPoint === path);
}

/** Unmounts everything at or below `path`, deepest first, so a tree can be removed safely. */
export async function unmountUnder(path: string): Promise<void> {
  const prefix = path.endsWith('/') ? path : `${path}/`;
  const targets = (await listMounts())
    .map((m) => m.mountPoint)
    .filter((p) => p === path || p.startsWith(prefix))
    .sort((a, b) => b.length - a.length);
  for (const target of [...new Set(targets)]) {
    try {
      await runCommand('umount', [target]);
    } catch {
      // Busy (a process still holds it): detach it so the directory can go.
      await runCommand('umount', ['-l', target]).catch(() => undefined);
    }
  }
}
