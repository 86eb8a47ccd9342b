import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

export const REPO = new URL('../../../../', import.meta.url).pathname;
export const SERVER_SRC = join(REPO, 'packages/server/src');

/** Every .ts file below `dir`. */
export async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sourceFiles(p)));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}
