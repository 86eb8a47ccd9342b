import type { PreparedNetwork } from '../../network/hooks.ts';
import type { SandboxSpec } from '../../runtime/driver.ts';
import type { ResourcesRecord } from '../../store/sandboxes.ts';
import type { TemplateVersion } from '../../store/templates.ts';
import type { BuildBase } from '../../templates/run-build.ts';

/** What a sandbox of a template starts from. */
export interface TemplateInfo {
  /** UUID, or the curated name. */
  id: string;
  rootfs: string;
  /** Step layers above rootfs, top first. */
  layers: string[];
  resources: ResourcesRecord;
  env: Record<string, string>;
  workdir?: string;
  startCmd?: string;
  readyCmd?: string;
  readyTimeoutS: number;
  /** Identity of the built version (warm pools hold sandboxes of one version). */
  versionKey: string;
}

export const BASE_TEMPLATE = 'platform/base';
export const BASE_RESOURCES: ResourcesRecord = { vcpu_count: 1, memory_mib: 1024, disk_mib: 4096 };
export const DEFAULT_READY_TIMEOUT_S = 60;
export const TEMPLATE_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A built version as sandboxes start from it. */
export function versionInfo(id: string, v: TemplateVersion): TemplateInfo {
  return {
    id,
    rootfs: v.baseRoot,
    layers: v.layers,
    resources: { ...BASE_RESOURCES },
    env: v.env,
    readyTimeoutS: v.readyTimeoutS,
    versionKey: v.key,
    ...(v.workdir ? { workdir: v.workdir } : {}),
    ...(v.startCmd ? { startCmd: v.startCmd } : {}),
    ...(v.readyCmd ? { readyCmd: v.readyCmd } : {}),
  };
}

/**
 * The engine spec of a sandbox of this template version on its prepared network: caller env wins
 * over the template's and the platform's CA variables; secret tokens (checked not to collide) over all.
 */
export function templateSandboxSpec(id: string, info: TemplateInfo, net: PreparedNetwork | undefined, env: Record<string, string> = {}): SandboxSpec {
  return {
    id,
    templateRoot: info.rootfs,
    templateLayers: info.layers,
    resources: { vcpuCount: info.resources.vcpu_count, memoryMib: info.resources.memory_mib, diskMib: info.resources.disk_mib },
    env: { ...info.env, ...net?.baseEnv, ...env, ...net?.secretEnv },
    hostname: 'sandbox',
    netnsPath: net?.netnsPath,
    netConfig: net?.netConfig,
    mounts: net?.mounts,
  };
}

/** A template version as the base of a build on top of it. */
export function buildBaseOf(info: TemplateInfo): BuildBase {
  return {
    key: info.versionKey,
    baseRoot: info.rootfs,
    layers: info.layers,
    env: info.env,
    resources: info.resources,
    ...(info.workdir ? { workdir: info.workdir } : {}),
    ...(info.startCmd ? { startCmd: info.startCmd } : {}),
    ...(info.readyCmd ? { readyCmd: info.readyCmd } : {}),
  };
}
