import { access, constants, mkdir } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import pMap from 'p-map';
import { readJson, subdirNames } from '../../optional-files.ts';
import { runCaptured } from '../host/posix-spawn.ts';
import { type GvisorPaths, gvisorSandboxPaths, snapshotPaths } from './paths.ts';
import { Runsc } from './runsc.ts';

export type RunscPlatform = 'ptrace' | 'systrap';
export type CheckpointCompression = 'none' | 'flate-best-speed';

/**
 * The runsc build and platform a sandbox runs on, recorded in its meta (and a
 * snapshot's): gVisor does not promise that one build restores another's
 * checkpoint, so every later call for that sandbox uses exactly this.
 */
export interface RunscEngine {
  /** Absolute path of the binary. */
  path: string;
  /** What `runsc --version` said, e.g. `0.0~20240729.0`. */
  version: string;
  platform: RunscPlatform;
}

/** Debian 13's build, installed by scripts/bootstrap.sh: the default for new sandboxes when present. */
export const BUNDLED_RUNSC = '/var/lib/sandpit/tools/runsc-20240729/runsc';

/**
 * What a meta without an engine means: written before engines were recorded,
 * by Debian 12's runsc on PATH with ptrace and the state root of that time.
 */
const LEGACY: RunscEngine = { path: 'runsc', version: '0.0~20221219.0', platform: 'ptrace' };

/**
 * Flags of every recorded engine. Writes to the root must land in the sandbox's host
 * overlay (template layers, snapshot layers, quotas and file transfers read it there):
 * 20240729 defaults to gVisor's own overlay instead (`root:self`), 20221219 to none.
 */
const RECORDED_FLAGS = ['--overlay2=none'];

/**
 * A build from 2024 on saves a sandbox whatever TCP connections it holds when booted with
 * `--net-disconnect-ok`: the save cuts them, as a VM's pause does, and every process lives on.
 * 20221219 has no such flag and fails the save (ending the sandbox) on any connection.
 */
const CUTS_CONNECTIONS_FLAGS = ['--net-disconnect-ok'];

/** The build date in a runsc version (`0.0~20240729.0` -> 20240729); 0 when it has none. */
function buildDate(version: string): number {
  return Number(/(\d{8})/.exec(version)?.[1] ?? 0);
}

/**
 * 20221219's save fails, and ends the sandbox, on a TCP socket that epoll watches (any event-loop
 * server, loopback listeners included); 20240729 saves them (measured raw: a Python asyncio listener).
 * `undefined`: a meta from before engines were recorded, which is 20221219.
 */
export function savesEpollWatchedSockets(engine: RunscEngine | undefined): boolean {
  return buildDate((engine ?? LEGACY).version) >= 20240101;
}

/**
 * The platform a build runs: systrap came to gVisor in 2023, so an older build (Debian 12's, the
 * fallback when bootstrap could not fetch Debian 13's) runs ptrace whatever is asked.
 */
export function platformFor(version: string, wanted: RunscPlatform): RunscPlatform {
  return wanted === 'systrap' && buildDate(version) < 20230101 ? 'ptrace' : wanted;
}

/** Whether sandboxes of this build are booted so that a save cuts their TCP connections instead of failing on them. */
export function cutsConnections(engine: RunscEngine | undefined): boolean {
  return buildDate((engine ?? LEGACY).version) >= 20240101;
}

/**
 * How a build writes a checkpoint's memory. Builds from 2024 on compress it by default
 * (flate-best-speed); 20221219 cannot be asked. A restore reads either.
 */
export function checkpointFlags(engine: RunscEngine | undefined, compression: CheckpointCompression): string[] {
  return buildDate((engine ?? LEGACY).version) >= 20240101 ? [`--compression=${compression}`] : [];
}

/** 20221219 answers coreutils' `statx` with EINVAL (`ls -l`, `stat` fail), 20240729 does not; builds before 2024 get the shim. */
export function needsStatxShim(engine: RunscEngine): boolean {
  return buildDate(engine.version) < 20240101;
}

/**
 * Every runsc build this driver's sandboxes use, each with its own state root:
 * an older runsc reads a newer one's state files but reports its sandboxes
 * stopped, so builds never share a root.
 */
export class RunscEngines {
  readonly #paths: GvisorPaths;
  readonly #byKey = new Map<string, Runsc>();
  readonly #compression: CheckpointCompression;
  #default: RunscEngine | undefined;

  constructor(paths: GvisorPaths, compression: CheckpointCompression = 'none') {
    this.#paths = paths;
    this.#compression = compression;
    this.for(undefined);
  }

  /** Resolves the build new sandboxes get: its path on PATH and its version. */
  async init(wanted: { path?: string; platform: RunscPlatform }): Promise<void> {
    const path = await resolveBinary(wanted.path ?? (await defaultRunsc()));
    const version = await runscVersion(path);
    this.#default = { path, version, platform: platformFor(version, wanted.platform) };
    await mkdir(this.for(this.#default).root, { recursive: true, mode: 0o700 });
  }

  /** Registers the build of every sandbox and snapshot on disk, so that listing and recovery see their state roots. */
  async load(): Promise<void> {
    const sandboxes = (await subdirNames(this.#paths.sandboxesDir)).map((id) => gvisorSandboxPaths(this.#paths, id).meta);
    const snapshots = (await subdirNames(this.#paths.snapshotsDir)).map((id) => snapshotPaths(this.#paths, id).meta);
    // Read many at once: a host may hold 10,000 sandboxes, and this is on the way to serving.
    const engines = await pMap([...sandboxes, ...snapshots], async (file) => (await readJson<{ engine?: RunscEngine }>(file))?.engine, { concurrency: 32 });
    for (const engine of engines) if (engine) this.for(engine);
  }

  /** The engine new sandboxes are created with. */
  get default(): RunscEngine {
    if (!this.#default) throw new Error('gvisor driver: call init() first');
    return this.#default;
  }

  /** The runsc for a sandbox whose meta records `engine` (absent: the legacy build). */
  for(engine: RunscEngine | undefined): Runsc {
    const e = engine ?? LEGACY;
    const key = `${e.path}\0${e.version}\0${e.platform}`;
    let r = this.#byKey.get(key);
    if (!r) {
      const root = engine ? join(this.#paths.gvisorDir, `runsc-${e.version.replace(/[^\w.-]/g, '_')}`) : this.#paths.runscRoot;
      r = new Runsc(root, e.path, e.platform, engine ? [...RECORDED_FLAGS, ...(cutsConnections(engine) ? CUTS_CONNECTIONS_FLAGS : [])] : [], checkpointFlags(engine, this.#compression));
      this.#byKey.set(key, r);
    }
    return r;
  }

  /** One runsc per state root in use (listing a root needs no particular build). */
  all(): Runsc[] {
    return [...new Map([...this.#byKey.values()].map((r) => [r.root, r])).values()];
  }
}

/** The runsc a new sandbox gets when SANDPIT_RUNSC is unset: the bundled build when installed, else the one on PATH. */
export async function defaultRunsc(): Promise<string> {
  return (await isExecutable(BUNDLED_RUNSC)) ? BUNDLED_RUNSC : 'runsc';
}

/** An absolute path for `bin` (looked up on PATH when it names no directory), so a changed PATH cannot change a sandbox's build. */
export async function resolveBinary(bin: string): Promise<string> {
  if (bin.includes('/')) {
    if (await isExecutable(bin)) return bin;
    throw new Error(`runsc ${bin} is not an executable file`);
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const p = join(dir, bin);
    if (await isExecutable(p)) return p;
  }
  throw new Error(`${bin} is not on PATH`);
}

async function isExecutable(p: string): Promise<boolean> {
  return access(p, constants.X_OK).then(
    () => true,
    () => false,
  );
}

export async function runscVersion(path: string): Promise<string> {
  const { stdout } = await runCaptured(path, ['--version']);
  const m = /runsc version (\S+)/.exec(stdout);
  if (!m) throw new Error(`${path} --version did not name a runsc version`);
  return m[1]!;
}
