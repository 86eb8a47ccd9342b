import type { BindMount, NetConfig } from '../runtime/driver.ts';
import type { NetworkRules } from '../store/sandboxes.ts';

/** What the engine needs to start a sandbox on its network. */
export interface PreparedNetwork {
  /** Applied under the caller's env (CA trust). */
  baseEnv: Record<string, string>;
  /** Applied over it: env name -> proxy token of each bound secret. */
  secretEnv: Record<string, string>;
  netnsPath: string;
  netConfig: NetConfig;
  mounts: BindMount[];
  /** Settles when the sandbox's egress rules are in place; await it before the sandbox counts as created. */
  ready: Promise<void>;
  /** Undoes everything prepare did (the create failed). */
  abort(): Promise<void>;
}

/** The network steps of the sandbox state machine. */
export interface SandboxNetworkHooks {
  prepare(input: { teamId: string; sandboxId: string; templateRoot: string; network: NetworkRules | null; secrets: Record<string, string> }): Promise<PreparedNetwork>;
  update(sandboxId: string, network: NetworkRules | null): Promise<void>;
  release(sandboxId: string): Promise<void>;
}
