/** What every isolation engine (container, gvisor) offers the services above it. */
import type { Socket } from 'node:net';
import type { EngineHealth } from './engine-health.ts';
import type { LayerBase } from './host/layer-changes.ts';
import type { TreeFile } from './tree-transfer.ts';

export type DriverName = 'container' | 'gvisor';

export interface Resources {
  vcpuCount: number;
  memoryMib: number;
  diskMib: number;
}

/** A host file or directory bind-mounted read-only into the sandbox. */
export interface BindMount {
  source: string;
  destination: string;
  /** A volume's root: writable unless readOnly (other bind mounts are read-only); crun binds it idmapped. */
  volume?: { readOnly: boolean };
}

/** Addresses and routes of a sandbox's network namespace (besides loopback and kernel routes). */
export interface NetConfig {
  addrs: { dev: string; cidr: string }[];
  routes: { dst: string; gateway?: string; dev?: string }[];
}

export interface SandboxSpec {
  /** Bare lowercase UUID; also the engine's container id. */
  id: string;
  /** Read-only root filesystem of the template, shared by every sandbox of it. */
  templateRoot: string;
  /** Read-only layers stacked above templateRoot, top first (a built template's step layers). */
  templateLayers?: string[];
  resources: Resources;
  /** Environment every process in the sandbox starts with. */
  env: Record<string, string>;
  hostname: string;
  /** Join this network namespace; absent: a private namespace with loopback only. */
  netnsPath?: string;
  /** The addresses and routes that namespace was given, so engines need not read them back. */
  netConfig?: NetConfig;
  /** Bind mounts over the root: read-only files (per-sandbox resolv.conf, the egress CA bundle), and volumes. */
  mounts?: BindMount[];
}

/** A sandbox's layer and base; `snapshotId` names the snapshot it was forked from (its upper is absent once that is deleted). */
export type WritableLayer = LayerBase & { snapshotId?: string };

/** What the engine reports about a sandbox it holds. */
export type EngineState = 'running' | 'paused' | 'stopped' | 'missing';

export interface EngineStats {
  memoryBytes: number;
  cpuUsageNs: number;
  diskBytes: number;
}

export interface RuntimeDriver {
  readonly name: DriverName;
  /** Where a paused sandbox's memory lives: in host RAM (freezer) or written to disk (checkpoint). */
  readonly pauseKeeps: 'ram' | 'disk';
  /** Creates and starts the sandbox; resolves once its agent accepts connections. */
  create(spec: SandboxSpec): Promise<void>;
  pause(id: string): Promise<void>;
  /**
   * A pause that keeps only the disk: every process ends and the memory is freed; the sandbox's
   * writes, network and environment stay, and resume boots it afresh from them. Absent: the engine cannot.
   */
  stop?(id: string): Promise<void>;
  /** Present with stop: drops the memory a pause kept, so the next resume boots the sandbox from its disk. */
  dropMemory?(id: string): Promise<void>;
  /** Continues a paused sandbox where it was, or boots a stopped one. */
  resume(id: string): Promise<void>;
  /** Releases processes, mounts, cgroups, namespaces and disk. Idempotent. */
  destroy(id: string): Promise<void>;
  state(id: string): Promise<EngineState>;
  /** Ids the engine holds any state for, so a restart can reconcile against the store. */
  list(): Promise<string[]>;
  stats(id: string): Promise<EngineStats>;
  /** Present when the engine can tell cheaply (no engine CLI call) whether a running sandbox's engine still lives. */
  health?(id: string): Promise<EngineHealth>;
  /** Unix socket path on the host where the sandbox's agent listens. */
  agentSocket(id: string): string;
  /** Host directory holding the sandbox's own writes (its overlay upper dir); template builds copy it into a layer. */
  upperDir(id: string): string;
  /**
   * Present when the engine can mount volumes into a running sandbox (crun). Absent (gVisor): a
   * sandbox gets its volumes only when it boots, so a create with volumes takes no pre-started one.
   */
  attachVolumes?(id: string, mounts: readonly BindMount[]): Promise<void>;
  /** Present when the engine can show a sandbox's layer with its base (to list its changes); undefined when it holds none. */
  writableLayer?(id: string): Promise<WritableLayer | undefined>;
  /**
   * Present when the agent dials the host instead of listening (gvisor): resolves
   * with the agent's next connection. Absent: dial agentSocket(id).
   */
  connectAgent?(id: string, timeoutMs: number): Promise<Socket>;
  /**
   * Template roots and layers (host paths) that the sandboxes and snapshots this engine holds stack on,
   * so unused template files can be told apart. Absent: the engine cannot tell, and nothing is collected.
   */
  templatePaths?(): Promise<string[]>;
  /** Present on a set of engines: whether it manages sandboxes recorded with that driver name. */
  serves?(name: string): boolean;
  /** Present when the engine can capture memory and disk (gvisor); absent: snapshots answer 503. */
  readonly snapshots?: SnapshotEngine;
  /** Present when a paused sandbox can be copied to another node (gvisor: its memory is on disk). */
  readonly moves?: SandboxMoves;
  /**
   * Stops background work; sandboxes keep running. `release` also frees host-wide
   * resources (mounts) and only succeeds once no sandbox remains (tests, uninstall).
   */
  close(opts?: { release?: boolean }): Promise<void>;
}

/** The engine cannot capture the sandbox as it stands (open TCP connections, a held agent channel): the API answers 409. */
export class CaptureRefused extends Error {
  override name = 'CaptureRefused';
  /** When a retry is expected to work, if the engine can tell (seconds). */
  readonly retryAfterS: number | undefined;

  constructor(message: string, retryAfterS?: number) {
    super(message);
    this.retryAfterS = retryAfterS;
  }
}

/** Engine teardowns run at once (deletes, a restart's leftovers, uninstall): each kills, unmounts and deletes a tree, mostly kernel work that overlaps only so far. */
export const TEARDOWN_CONCURRENCY = 4;

/**
 * A save failed and the engine ended the sandbox: it is lost, though its process may not have exited yet
 * and the engine's state can still say running for a moment.
 */
export class CaptureEndedSandbox extends Error {
  override name = 'CaptureEndedSandbox';
}

/** A snapshot as the engine holds it on disk. */
export interface SnapshotFiles {
  sizeBytes: number;
  /**
   * Taken under engine settings other than a new sandbox would get now (another engine build,
   * platform or CPU count): its forks keep the old ones, so a template capture of it is taken again.
   */
  stale?: boolean;
}

/** Memory+disk snapshots: captured from a sandbox, kept on disk, and started as new sandboxes. */
export interface SnapshotEngine {
  /**
   * Captures sandbox `id` (running or paused) as `snapshotId`. Resolves once the snapshot is
   * complete on disk; a running sandbox continues afterwards, and `running` settles when it does:
   * true once it runs again, false when it could not and rests paused on a complete checkpoint.
   * The engine takes no other work on the sandbox until then.
   */
  capture(id: string, snapshotId: string): Promise<SnapshotFiles & { running: Promise<boolean> }>;
  /** Starts a new sandbox (spec.id) whose processes continue from the snapshot. */
  createFrom(spec: SandboxSpec, snapshotId: string): Promise<void>;
  /** The complete snapshot, or undefined when it is missing or was never completed. */
  inspect(snapshotId: string): Promise<SnapshotFiles | undefined>;
  /** Idempotent. */
  delete(snapshotId: string): Promise<void>;
  /** Every snapshot id the engine holds files for, complete or not. */
  list(): Promise<string[]>;
  /** Present when the engine's snapshots can be copied to another node (gvisor). */
  readonly transfer?: SnapshotTransfer;
}

/** A snapshot's files, by part (each a directory tree), as one node sends them to another. */
export type SnapshotManifest = Record<string, TreeFile[]>;

/** The template files a snapshot's sandbox stacks on: paths on the node that made it. */
export interface TemplateFiles {
  root: string;
  layers: string[];
}

/**
 * Fetches one part from the sending node into the existing directory `dest` (unpacked, its bytes' digest checked
 * against the sender's); `files` is the part's manifest, which tells a copy cut short what it still lacks.
 */
export type FetchPart = (part: string, dest: string, files: TreeFile[]) => Promise<void>;

/** Copying a complete snapshot between nodes: the holder sends its parts, the receiver checks and keeps them. */
export interface SnapshotTransfer {
  /** The complete snapshot's parts and files; undefined when it is not here. */
  manifest(snapshotId: string): Promise<SnapshotManifest | undefined>;
  /** The directory one part is sent from (as a tar stream). */
  partDir(snapshotId: string, part: string): string;
  /**
   * Receives a snapshot: each part is fetched into a temporary place and checked against `manifest`;
   * only then is it renamed into place, so a failed copy leaves nothing that looks whole.
   * `relocate` gives this node's paths of the snapshot's template files.
   */
  receive(snapshotId: string, manifest: SnapshotManifest, fetch: FetchPart, relocate: (t: TemplateFiles) => Promise<TemplateFiles>): Promise<void>;
}

/** Ids become path components and crun container names: allow only a safe alphabet. */
export function checkId(id: string): void {
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(id)) throw new Error(`invalid sandbox id ${JSON.stringify(id)}`);
}

/** What every engine checks before it creates a sandbox: a safe id, usable resources, a valid hostname. */
export function checkSpec(spec: SandboxSpec): void {
  checkId(spec.id);
  const { vcpuCount, memoryMib, diskMib } = spec.resources;
  if (!(vcpuCount > 0 && memoryMib >= 16 && diskMib >= 1)) throw new Error(`invalid resources ${JSON.stringify(spec.resources)}`);
  if (!/^[a-zA-Z0-9]([a-zA-Z0-9.-]{0,62})$/.test(spec.hostname)) throw new Error(`invalid hostname ${JSON.stringify(spec.hostname)}`);
}

/** A paused sandbox's files by part, and the engine's own record of it (opaque to the caller). */
export interface SandboxManifest {
  files: Record<string, TreeFile[]>;
  /** The template files it stacks on, as paths on the node that sends it. */
  template: TemplateFiles;
  meta: unknown;
}

/** Where a moved sandbox joins this node: its network namespace here and the mounts that go with it. */
export interface MoveTarget {
  id: string;
  /** This node's paths of the sandbox's template files. */
  template: TemplateFiles;
  netnsPath?: string;
  netConfig?: NetConfig;
  mounts?: BindMount[];
}

/** Copying a paused sandbox (checkpoint image and writable layer) to another node, where it resumes. */
export interface SandboxMoves {
  /** The paused sandbox's parts and files; undefined when it is not here or not paused. */
  manifest(id: string): Promise<SandboxManifest | undefined>;
  /** The directory one part is sent from (as a tar stream). */
  partDir(id: string, part: string): string;
  /**
   * Makes the sandbox paused here from another node's copy, each part checked against `manifest`
   * before it is kept; a failure leaves nothing of it here. Resume then restores it into `target`'s namespace.
   */
  receive(target: MoveTarget, manifest: SandboxManifest, fetch: FetchPart): Promise<void>;
}
