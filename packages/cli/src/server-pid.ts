import { readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Names the serving process of a data directory, so `sandpit down` can find it. */
const PID_FILE = 'server.pid';

export async function writeServerPid(dataDir: string): Promise<void> {
  await writeFile(join(dataDir, PID_FILE), `${process.pid}\n`);
}

export async function removeServerPid(dataDir: string): Promise<void> {
  const path = join(dataDir, PID_FILE);
  if ((await readFile(path, 'utf8').catch(() => '')).trim() === String(process.pid)) await rm(path, { force: true });
}

/** The PID of the server serving this data directory, if it still runs (a stale file after a crash is not). */
export async function runningServerPid(dataDir: string): Promise<number | undefined> {
  const pid = Number((await readFile(join(dataDir, PID_FILE), 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    // A recycled PID belongs to some other program: only a `serve` process counts.
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmdline.includes('serve') ? pid : undefined;
  } catch {
    return undefined;
  }
}
