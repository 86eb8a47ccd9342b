import { readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';

/** Reads of paths that may be absent (a crash can leave any of them half-made): absence is an answer, not an error. */
export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** The parsed file, or undefined when it is missing or not complete JSON. */
export async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Names of the directories in `dir`; none when it does not exist. */
export async function subdirNames(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => e.name);
}

/** Written under a temporary name and renamed over `path`: a reader (or a crash) never sees half a file. */
export async function writeFileAtomic(path: string, text: string, mode?: number): Promise<void> {
  await writeFile(`${path}.tmp`, text, mode === undefined ? undefined : { mode });
  await rename(`${path}.tmp`, path);
}
