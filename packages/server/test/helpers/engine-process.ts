import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The host PID of the sandbox's engine: runsc's sentry (its bundle path names data dir and sandbox) or crun's container init. */
export async function enginePid(dataDir: string, sandboxId: string): Promise<number> {
  const uuid = sandboxId.replace(/^sb-[a-z0-9]+-/, '');
  const crunPid = await readFile(join(dataDir, 'sandboxes', uuid, 'init.pid'), 'utf8').catch(() => '');
  if (crunPid.trim()) return Number(crunPid.trim());
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    const cmd = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (cmd[0] === 'runsc-sandbox' && cmd.includes('boot') && cmd.some((a) => a.includes(dataDir) && a.includes(uuid))) return Number(pid);
  }
  throw new Error(`no engine process for ${sandboxId}`);
}
