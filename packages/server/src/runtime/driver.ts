/** What every isolation engine (container, gvisor, vm) offers the services above it. */

export type DriverName = 'container' | 'gvisor' | 'vm';

export interface Resources {
  vcpuCount: number;
  memoryMib: number;
  diskMib: number;
}

export interface SandboxSpec {
  /** Bare lowercase UUID; also the engine's container id. */
  id: string;
  /** Read-only root filesystem of the template, shared by every sandbox of it. */
  templateRoot: string;
  resources: Resources;
  /** Environment every process in the sandbox starts with. */
  env: Record<string, string>;
  hostname: string;
  /** Join this network namespace; absent: a private namespace with loopback only. */
  netnsPath?: string;
}

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
  resume(id: string): Promise<void>;
  /** Releases processes, mounts, cgroups, namespaces and disk. Idempotent. */
  destroy(id: string): Promise<void>;
  state(id: string): Promise<EngineState>;
  /** Ids the engine holds any state for, so a restart can reconcile against the store. */
  list(): Promise<string[]>;
  stats(id: string): Promise<EngineStats>;
  /** Unix socket path on the host where the sandbox's agent listens. */
  agentSocket(id: string): string;
}
