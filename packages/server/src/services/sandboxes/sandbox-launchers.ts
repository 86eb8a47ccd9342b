import type { Logger } from 'pino';
import type { PreparedNetwork, SandboxNetworkHooks } from '../../network/hooks.ts';
import type { AgentPool } from '../../runtime/agent-pool.ts';
import type { BindMount, RuntimeDriver, SandboxSpec, SnapshotEngine } from '../../runtime/driver.ts';
import type { NetworkRules } from '../../store/sandboxes.ts';
import { bootSandbox } from '../../templates/boot.ts';
import { inSpan } from '../../tracing.ts';
import type { TemplateCaptures } from '../templates/template-captures.ts';
import type { TemplateInfo } from '../templates/template-info.ts';
import { giveSandboxEnv } from './sandbox-env.ts';

/** A sandbox being created: what it starts from, and whether the engine holds it yet (then a failure must destroy it). */
export interface Launch {
  id: string;
  spec: SandboxSpec;
  template: TemplateInfo;
  net?: PreparedNetwork;
  env: Record<string, string>;
  network: NetworkRules | null;
  engineHolds: boolean;
}

export interface LaunchDeps {
  driver: RuntimeDriver;
  agents: AgentPool;
  network?: SandboxNetworkHooks;
  captures?: TemplateCaptures;
  log: Logger;
}

/** The caller's volumes among a spec's mounts, and the spec without them: what an engine starts before it is given them. */
function splitVolumes(spec: SandboxSpec): { volumes: BindMount[]; rest: SandboxSpec } {
  const volumes = spec.mounts?.filter((m) => m.volume) ?? [];
  return { volumes, rest: volumes.length > 0 ? { ...spec, mounts: spec.mounts!.filter((m) => !m.volume) } : spec };
}

/** A pre-started sandbox of the template, given the caller's volumes, network rules and env. */
export async function personalizeWarm(deps: LaunchDeps, l: Launch): Promise<void> {
  const { volumes } = splitVolumes(l.spec);
  if (volumes.length > 0) await deps.driver.attachVolumes!(l.id, volumes);
  if (l.network) await deps.network?.update(l.id, l.network);
  if (Object.keys(l.env).length > 0) await giveSandboxEnv(await deps.agents.get(l.id), l.env);
}

/** A fork: processes, environment and disk come from the snapshot; the spec's template root and env are unused. */
export async function startFork(l: Launch, fork: { engine: SnapshotEngine; snapshotId: string }): Promise<void> {
  await Promise.all([fork.engine.createFrom(l.spec, fork.snapshotId), l.net?.ready]);
}

/**
 * Restores the template version's capture (start_cmd already running), then gives it the caller's
 * volumes (the capture was taken without them); false when it could not, and the sandbox must boot.
 */
export async function restoreCapture(deps: LaunchDeps, l: Launch, captureId: string): Promise<boolean> {
  const { volumes, rest } = splitVolumes(l.spec);
  const [restored] = await Promise.all([deps.captures!.restore(rest, l.template.id, captureId), l.net?.ready]);
  if (!restored) return false;
  if (volumes.length > 0) {
    try {
      await deps.driver.attachVolumes!(l.id, volumes);
    } catch (err) {
      deps.log.warn({ sandbox: l.id, template: l.template.id, err: String(err) }, 'giving volumes to the restored capture failed; booting instead');
      await deps.driver.destroy(l.id);
      return false;
    }
  }
  l.engineHolds = true;
  // The capture's processes (start_cmd) keep the template's env; the caller's env and secret tokens apply from here on, and are written for them to read.
  const extra = { ...l.env, ...l.net?.secretEnv };
  const agent = deps.agents.get(l.id);
  if (Object.keys(extra).length > 0) await giveSandboxEnv(await agent, extra);
  else agent.catch(() => undefined);
  return true;
}

/** A fresh boot: the engine creates it, then the template's start_cmd and ready_cmd run. */
export async function bootFresh(deps: LaunchDeps, l: Launch): Promise<void> {
  await Promise.all([deps.driver.create(l.spec), l.net?.ready && inSpan('sandbox.network_ready', () => l.net!.ready)]);
  await inSpan('sandbox.boot', () => bootSandbox(deps.agents, l.id, l.template));
  // Opened now, so the first command does not wait for the connection.
  deps.agents.get(l.id).catch(() => undefined);
}
