import { EventEmitter } from 'node:events';
import { createReadStream } from 'node:fs';
import { appendFile, mkdir, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { newId } from '../ids.ts';
import type { AgentClient, AgentProcess } from '../runtime/agent-client.ts';
import type { RuntimeDriver, SandboxSpec } from '../runtime/driver.ts';
import { BootError, startAndWaitReady } from './boot.ts';
import { chainKey, type LayerCache, layerBytes } from './layer-cache.ts';
import type { TemplateStep } from '../schemas/template.ts';
import type { ResourcesRecord } from '../store/sandboxes.ts';
import type { BuildStepResult, TemplateVersion } from '../store/templates.ts';
import type { AgentPool } from '../runtime/agent-pool.ts';
import type { PreparedNetwork, SandboxNetworkHooks } from '../network/hooks.ts';
import { SANDBOX_HOME } from './sandbox-user.ts';
import type { BuildArchives } from './build-archives.ts';

export type BuildFailureCode = 'image_pull_failed' | 'step_failed' | 'boot_failed' | 'snapshot_failed' | 'start_cmd_failed' | 'ready_cmd_failed' | 'build_failed';

/** A build ended badly; the message follows the contract's `<code>: <detail>` convention. */
export class BuildFailure extends Error {
  readonly code: BuildFailureCode;
  constructor(code: BuildFailureCode, detail: string) {
    super(`${code}: ${detail}`);
    this.code = code;
  }
}

export interface BuildLogEvent {
  timestamp: string;
  line?: string;
  finished?: boolean;
  status?: 'ready' | 'failed';
  error?: string;
}

/** Lines of one build: kept in memory while it runs (for live followers) and appended to a file (for later readers). */
export class BuildLog extends EventEmitter<{ event: [BuildLogEvent] }> {
  readonly path: string;
  readonly events: BuildLogEvent[] = [];
  #writes: Promise<void>;
  finished = false;

  constructor(path: string) {
    super();
    this.path = path;
    this.#writes = mkdir(dirname(path), { recursive: true }).then(() => undefined);
  }

  line(text: string): void {
    for (const l of text.replace(/\n$/, '').split('\n')) this.#push({ timestamp: new Date().toISOString(), line: l });
  }

  finish(status: 'ready' | 'failed', error?: string): void {
    this.#push({ timestamp: new Date().toISOString(), finished: true, status, ...(error ? { error } : {}) });
    this.finished = true;
  }

  #push(ev: BuildLogEvent): void {
    this.events.push(ev);
    const text = `${JSON.stringify(ev)}\n`;
    this.#writes = this.#writes.then(() => appendFile(this.path, text)).catch(() => undefined);
    this.emit('event', ev);
  }

  flushed(): Promise<void> {
    return this.#writes;
  }

  static async read(path: string): Promise<BuildLogEvent[]> {
    const text = await readFile(path, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as BuildLogEvent);
  }
}

/** What a build starts from: platform/base's root, or another template's version. */
export type BuildBase = Omit<TemplateVersion, 'readyTimeoutS'> & { resources: ResourcesRecord };

export interface BuildInput {
  teamId: string;
  base: BuildBase;
  steps: TemplateStep[];
  startCmd?: string;
  readyCmd?: string;
  readyTimeoutS: number;
  cache: LayerCache;
  log: BuildLog;
  /** Called as each step settles, so the build record can show progress. */
  onStep?: (steps: BuildStepResult[]) => void;
  /** Steps from this index on run even where their layer is cached (their layers are this build's own). */
  noCacheFrom?: number;
  buildId?: string;
}

export interface BuildDeps {
  driver: RuntimeDriver;
  agents: AgentPool;
  /** Egress for build steps (apt, npm) where the network layer runs. */
  network?: SandboxNetworkHooks;
  log: Logger;
  /** A template's layers together may hold at most this many bytes (snapshot_failed: image_too_large). */
  maxTemplateBytes: number;
  /** Uploaded build contexts of archive steps. */
  archives?: BuildArchives;
}

const STEP_TIMEOUT_S = 600;
const STDIN_SLICE = 256 * 1024;
/** Without a ready_cmd, start_cmd must stay up this long in the build to count as started. */
const START_UPTIME_MS = 1000;

/**
 * Runs a template build: every run/copy/workdir step in a fresh sandbox of its
 * own over the layers so far, whose writes (the overlay upper dir) become the
 * step's layer; a step whose chain key is already cached is not run. Finally a
 * sandbox of the result must start start_cmd and pass ready_cmd.
 */
export async function runBuild(deps: BuildDeps, input: BuildInput): Promise<{ version: TemplateVersion; steps: BuildStepResult[] }> {
  const { base, cache, log } = input;
  let key = base.key;
  const layers = [...base.layers];
  const env = { ...base.env };
  let workdir = base.workdir;
  const results: BuildStepResult[] = input.steps.map((s, index) => ({ index, type: s.type, result: 'pending' }));
  const report = () => input.onStep?.(results.map((r) => ({ ...r })));
  let totalBytes = 0;
  for (const l of layers) totalBytes += await layerBytes(l);

  for (const [i, step] of input.steps.entries()) {
    // env and workdir enter the chain too: later steps run under them.
    key = chainKey(key, step);
    if (input.noCacheFrom !== undefined && i >= input.noCacheFrom) key = chainKey(key, { no_cache: input.buildId });
    const label = `step ${i + 1}/${input.steps.length} (${step.type})`;
    if (step.type === 'env') {
      Object.assign(env, step.env);
      results[i]!.result = 'config';
      log.line(`${label}: env ${Object.keys(step.env).join(' ')}`);
      report();
      continue;
    }
    if (await cache.has(key)) {
      if (step.type === 'workdir') workdir = step.path;
      layers.unshift(cache.root(key));
      totalBytes += await layerBytes(cache.root(key));
      results[i]!.result = 'cached';
      log.line(`${label}: cached (${key})`);
      report();
      continue;
    }
    log.line(`${label}: running`);
    const started = performance.now();
    const spec = specFor(base, layers, env);
    const bytes = await inSandbox(deps, input.teamId, spec, log, async (client, upper) => {
      const r = await runStep(client, step, workdir, env, log, step.type === 'archive' ? archiveFile(deps, input.teamId, step.archive) : undefined);
      if (r.exitCode !== 0) {
        results[i]!.result = 'failed';
        report();
        throw new BuildFailure('step_failed', `${label} exited with code ${r.exitCode}${r.error ? ` (${r.error})` : ''}`);
      }
      // Data a step wrote must be on the host before its layer is copied (gVisor writes back lazily).
      await runStep(client, { type: 'run', command: 'sync', user: 'root' }, undefined, {}, undefined);
      try {
        return await cache.capture(upper, key);
      } catch (err) {
        throw new BuildFailure('snapshot_failed', `${label}: capturing its layer failed: ${(err as Error).message}`);
      }
    });
    totalBytes += bytes;
    if (totalBytes > deps.maxTemplateBytes) {
      results[i]!.result = 'failed';
      report();
      throw new BuildFailure('snapshot_failed', `image_too_large: the template's layers hold ${mib(totalBytes)} MiB, the limit is ${mib(deps.maxTemplateBytes)} MiB`);
    }
    if (step.type === 'workdir') workdir = step.path;
    layers.unshift(cache.root(key));
    results[i]!.result = 'ran';
    results[i]!.duration_ms = Math.round(performance.now() - started);
    log.line(`${label}: done in ${results[i]!.duration_ms} ms (${key})`);
    report();
  }

  const startCmd = input.startCmd ?? base.startCmd;
  const readyCmd = input.readyCmd ?? base.readyCmd;
  if (startCmd || readyCmd) {
    log.line(`checking start_cmd${readyCmd ? ' and ready_cmd' : ''} in a sandbox of the result`);
    await inSandbox(deps, input.teamId, specFor(base, layers, env), log, async (client) => {
      try {
        await startAndWaitReady(
          client,
          { startCmd, readyCmd, readyTimeoutS: input.readyTimeoutS, workdir },
          {
            onOutput: (source, text) => log.line(`[${source}] ${text}`),
            minUptimeMs: START_UPTIME_MS,
          },
        );
      } catch (err) {
        if (err instanceof BootError) throw new BuildFailure(err.code, err.message);
        throw err;
      }
    });
    log.line('ready');
  }
  const version: TemplateVersion = {
    key,
    baseRoot: base.baseRoot,
    layers,
    env,
    readyTimeoutS: input.readyTimeoutS,
    ...(workdir ? { workdir } : {}),
    ...(startCmd ? { startCmd } : {}),
    ...(readyCmd ? { readyCmd } : {}),
  };
  return { version, steps: results };
}

function specFor(base: BuildBase, layers: string[], env: Record<string, string>): Omit<SandboxSpec, 'id'> {
  return {
    templateRoot: base.baseRoot,
    templateLayers: [...layers],
    resources: { vcpuCount: base.resources.vcpu_count, memoryMib: base.resources.memory_mib, diskMib: base.resources.disk_mib },
    env,
    hostname: 'sandbox',
  };
}

/** A throwaway sandbox (no store row, not billed) with egress where the network layer runs. */
async function inSandbox<T>(deps: BuildDeps, teamId: string, partial: Omit<SandboxSpec, 'id'>, log: BuildLog, fn: (client: AgentClient, upper: string) => Promise<T>): Promise<T> {
  const id = newId();
  let net: PreparedNetwork | undefined;
  try {
    net = await deps.network?.prepare({ teamId, sandboxId: id, templateRoot: partial.templateRoot, network: null, secrets: {} });
    await deps.driver.create({ ...partial, id, env: { ...net?.baseEnv, ...partial.env }, netnsPath: net?.netnsPath, netConfig: net?.netConfig, mounts: net?.mounts });
  } catch (err) {
    await net?.abort().catch(() => undefined);
    log.line(`sandbox boot failed: ${(err as Error).message}`);
    throw new BuildFailure('boot_failed', `the build sandbox did not start: ${firstLine((err as Error).message)}`);
  }
  try {
    let client: AgentClient;
    try {
      client = await deps.agents.get(id, 10_000);
    } catch (err) {
      throw new BuildFailure('boot_failed', `the build sandbox's agent is not reachable: ${(err as Error).message}`);
    }
    // A template whose sandboxes cannot run the user's commands did not boot in any useful sense.
    const probe = await runStep(client, { type: 'run', command: 'true', user: 'user' }, '/', {}, undefined);
    if (probe.exitCode !== 0) {
      throw new BuildFailure('boot_failed', `the build sandbox cannot run commands as user (exit ${probe.exitCode}${probe.error ? `: ${probe.error}` : ''})`);
    }
    return await fn(client, deps.driver.upperDir(id));
  } finally {
    deps.agents.drop(id);
    await deps.driver.destroy(id).catch((err) => deps.log.error({ sandbox: id, err: String(err) }, 'build sandbox cleanup failed; reconciliation retries'));
    await net?.abort().catch(() => undefined);
  }
}

/**
 * Copies entries of an archive read on stdin (as root): unpacked aside, matched by the pattern
 * there, owned and moded there, then copied over with cp -a.
 */
const ARCHIVE_SCRIPT = `set -e
src=$1 dest=$2 owner=$3 mode=$4 gz=$5
case $dest in /*) ;; *) dest="$PWD/$dest" ;; esac
stage=$(mktemp -d /tmp/.sandpit-copy.XXXXXX)
trap 'rm -rf "$stage"' EXIT
if [ "$gz" = 1 ]; then tar -xzf - -C "$stage" --no-same-owner; else tar -xf - -C "$stage" --no-same-owner; fi
id -u "$owner" >/dev/null 2>&1 || { echo "user $owner: no such user" >&2; exit 126; }
cd "$stage"
IFS=
set -- $src
[ -e "$1" ] || [ -L "$1" ] || { echo "no file of the upload matches '$src'" >&2; exit 1; }
chown -hR "$owner": "$stage"
[ -z "$mode" ] || find "$stage" -mindepth 1 -type f -exec chmod "$mode" {} +
todir=0
case $dest in */) todir=1 ;; esac
if [ $# -gt 1 ] || { [ -d "$1" ] && [ ! -L "$1" ]; } || { [ -d "$dest" ] && [ ! -L "$dest" ]; }; then todir=1; fi
# A named directory gives its contents (as COPY does); entries a pattern matched keep their names (as cp does).
contents=1
case $src in *[*?[]*) contents=0 ;; esac
made=$dest
[ $todir = 1 ] || made=$(dirname -- "$dest")
if [ ! -e "$made" ]; then mkdir -p -- "$made"; chown "$owner": "$made"; fi
if [ $todir = 0 ]; then cp -a -- "$1" "$dest"; exit 0; fi
for m; do
  if [ $contents = 1 ] && [ -d "$m" ] && [ ! -L "$m" ]; then cp -a -- "$m"/. "$dest"/; else cp -a -- "$m" "$dest"/; fi
done`;

/** Where an archive step's upload is. */
function archiveFile(deps: BuildDeps, teamId: string, hash: string): string {
  if (!deps.archives) throw new BuildFailure('build_failed', 'archive steps need the build-context store, which this server has not');
  return deps.archives.path(teamId, hash);
}

async function isGzip(path: string): Promise<boolean> {
  const f = await open(path, 'r');
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await f.read(head, 0, 2, 0);
    return bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    await f.close();
  }
}

/** Runs one step's command to its end, streaming output into the log. */
async function runStep(
  client: AgentClient,
  step: Exclude<TemplateStep, { type: 'env' }>,
  workdir: string | undefined,
  env: Record<string, string>,
  log: BuildLog | undefined,
  archive?: string,
): Promise<{ exitCode: number; error?: string }> {
  let argv: string[];
  let user: string;
  let cwd: string | undefined;
  // A file is opened only once the process runs.
  let stdin: Buffer | { file: string } | undefined;
  if (step.type === 'run') {
    user = step.user ?? 'user';
    argv = ['/bin/sh', '-c', step.command];
    // Other accounts start in their own home (the agent's default).
    cwd = workdir ?? (user === 'root' ? '/root' : user === 'user' ? SANDBOX_HOME : undefined);
  } else if (step.type === 'copy') {
    user = step.user ?? 'user';
    // Inside the sandbox, so symlinked parents (/bin -> usr/bin) resolve as they would for the user.
    argv = ['/bin/sh', '-c', 'set -e; mkdir -p -- "$(dirname -- "$1")"; cat > "$1"; chmod "$2" -- "$1"', 'copy', step.path, step.mode ?? '0644'];
    cwd = '/';
    stdin = Buffer.from(step.content_base64, 'base64');
  } else if (step.type === 'archive') {
    if (!archive) throw new BuildFailure('build_failed', 'the archive step has no upload');
    const gz = await isGzip(archive).catch(() => {
      throw new BuildFailure('step_failed', `the upload ${step.archive} is gone; upload it again`);
    });
    user = 'root';
    argv = ['/bin/sh', '-c', ARCHIVE_SCRIPT, 'archive', step.src, step.dest, step.user ?? 'user', step.mode ?? '', gz ? '1' : '0'];
    cwd = workdir ?? SANDBOX_HOME;
    stdin = { file: archive };
  } else {
    user = 'root';
    argv = ['/bin/sh', '-c', '[ -d "$1" ] || { mkdir -p -- "$1" && chown user:user -- "$1"; }', 'workdir', step.path];
    cwd = '/';
  }
  return new Promise((resolve) => {
    const p = client.spawn({ argv, user, ...(cwd ? { cwd } : {}), env, timeoutMs: ((step.type === 'run' && step.timeout_s) || STEP_TIMEOUT_S) * 1000, stdin: stdin !== undefined });
    const out = (d: Buffer) => log?.line(d.toString());
    p.on('stdout', out);
    p.on('stderr', out);
    if (stdin !== undefined) {
      const input = stdin;
      p.once('spawn', () => {
        writeAll(p, Buffer.isBuffer(input) ? input : createReadStream(input.file)).then(
          () => p.closeStdin(),
          () => p.kill('SIGKILL'),
        );
      });
    }
    p.once('exit', (info) => resolve(info.timedOut ? { exitCode: 124, error: 'timed out' } : { exitCode: info.exitCode }));
    p.once('error', (err) => resolve({ exitCode: 127, error: err.message }));
  });
}

/** In slices the agent's stdin backlog can take. */
async function writeAll(p: AgentProcess, data: Buffer | AsyncIterable<Buffer>): Promise<void> {
  const chunks = Buffer.isBuffer(data) ? [data] : data;
  for await (const chunk of chunks) {
    for (let off = 0; off < chunk.length; off += STDIN_SLICE) await p.writeChecked(chunk.subarray(off, off + STDIN_SLICE));
  }
}

function mib(bytes: number): number {
  return Math.ceil(bytes / 1024 / 1024);
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.slice(0, 500);
}
