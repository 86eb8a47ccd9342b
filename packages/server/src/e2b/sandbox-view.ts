import { iso } from '../clock.ts';
import type { SandboxRecord } from '../store/sandboxes.ts';
import { ENVD_VERSION, envdAccessToken } from './envd/target.ts';
import type { E2bVolumeMount } from './volume-mounts-view.ts';

export const E2B_BASE = 'base';
const PLATFORM_BASE = 'platform/base';
/** What `endAt` says of a sandbox without a deadline (one made through Sandpit's own API). */
const NO_END = '9999-12-31T23:59:59.000Z';

/** E2B's names of its public templates (`desktop`: the Desktop SDK's default) and the curated templates that serve them. */
const E2B_TEMPLATES: Record<string, string> = { [E2B_BASE]: PLATFORM_BASE, 'code-interpreter-v1': 'platform/code-interpreter', desktop: 'platform/desktop' };
const E2B_NAME = new Map(Object.entries(E2B_TEMPLATES).map(([e2b, sandpit]) => [sandpit, e2b]));
/**
 * Ports that E2B's SDK for a template calls without any token: published as public previews of sandboxes
 * created from it through the E2B API, so those calls work even where allowPublicTraffic is false.
 */
export const E2B_PUBLIC_PORTS: Record<string, number[]> = { 'platform/code-interpreter': [49999] };

export const templateRef = (templateID: string) => E2B_TEMPLATES[templateID] ?? templateID;
/** Whether a name is one of E2B's public templates (served by curated ones, never a team's). */
export const isE2bTemplateName = (name: string) => Object.hasOwn(E2B_TEMPLATES, name);
const templateName = (id: string | null) => (id === null ? E2B_BASE : (E2B_NAME.get(id) ?? id));

export type E2bState = 'running' | 'paused';
/** Transitions in progress are shown as where they come from, as E2B has only these two. */
export const stateOf = (rec: SandboxRecord): E2bState => (rec.status === 'paused' || rec.status === 'resuming' ? 'paused' : 'running');

/** `Sandbox` of E2B's API: what create, resume and connect answer with; `domain`: SANDPIT_E2B_DOMAIN, where the SDK builds `{port}-{id}.{domain}` hosts. */
export function sandboxView(rec: SandboxRecord, domain: string | undefined) {
  const out: Record<string, unknown> = {
    templateID: templateName(rec.templateId),
    sandboxID: rec.id,
    clientID: rec.region,
    envdVersion: ENVD_VERSION,
    envdAccessToken: envdAccessToken(rec.id, rec.accessToken),
    domain: domain ?? null,
  };
  // Its ports need a token (it was made with allowPublicTraffic false, or through Sandpit's API): the port proxy takes this one too.
  if (rec.previewAccess !== 'legacy_public') out.trafficAccessToken = envdAccessToken(rec.id, rec.accessToken);
  if (rec.name) out.alias = rec.name;
  return out;
}

/** `ListedSandbox` of E2B's API. */
export function listedView(rec: SandboxRecord, volumeMounts: E2bVolumeMount[] = []) {
  const out: Record<string, unknown> = {
    templateID: templateName(rec.templateId),
    sandboxID: rec.id,
    clientID: rec.region,
    startedAt: iso(rec.createdAt),
    endAt: rec.autoPauseAt === null ? NO_END : iso(rec.autoPauseAt),
    cpuCount: rec.resources.vcpu_count,
    memoryMB: rec.resources.memory_mib,
    diskSizeMB: rec.resources.disk_mib,
    metadata: rec.metadata,
    state: stateOf(rec),
    envdVersion: ENVD_VERSION,
    volumeMounts,
  };
  if (rec.name) out.alias = rec.name;
  return out;
}

/** `SandboxDetail` of E2B's API. */
export function detailView(rec: SandboxRecord, domain: string | undefined, volumeMounts: E2bVolumeMount[] = []) {
  return {
    ...listedView(rec, volumeMounts),
    envdAccessToken: envdAccessToken(rec.id, rec.accessToken),
    domain: domain ?? null,
    network: { allowPublicTraffic: rec.previewAccess === 'legacy_public' },
    lifecycle: { onTimeout: rec.autoDeleteSeconds === 0 ? 'kill' : 'pause', autoResume: false },
  };
}
