import { iso } from '../../clock.ts';
import { taggedSandboxId } from '../../ids.ts';
import type { Sandbox } from '../../schemas/sandbox.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';

/** The API shape of a sandbox: absent fields are omitted, never null. `revokedSecrets`: which of its bound secrets are revoked; `showNode`: the caller may see where it runs. */
export function sandboxView(s: SandboxRecord, revokedSecrets: ReadonlySet<string>, showNode = false): Sandbox {
  const v: Sandbox = {
    id: taggedSandboxId(s.region, s.id),
    template_id: s.templateId,
    status: s.status,
    driver: s.driver,
    metadata: s.metadata,
    preview_access: s.previewAccess,
    secrets: Object.entries(s.secrets).map(([env, secret]) => ({ env, secret, revoked: revokedSecrets.has(secret) })),
    resources: s.resources,
    region: s.region,
    created_at: iso(s.createdAt),
    updated_at: iso(s.updatedAt),
  };
  if (s.name !== null) v.name = s.name;
  if (s.latestSnapshotId !== null) v.latest_snapshot_id = s.latestSnapshotId;
  if (s.status === 'failed' && s.failureReason) v.failure_reason = s.failureReason;
  if (s.autoPauseSeconds !== null) v.auto_pause_seconds = s.autoPauseSeconds;
  if (s.autoPauseDiskOnly) v.auto_pause_keep_memory = false;
  if (s.pausedDiskOnly && s.status === 'paused') v.kept_memory = false;
  if (s.autoDeleteSeconds !== null) v.auto_delete_seconds = s.autoDeleteSeconds;
  if (s.autoDeleteAt !== null && s.status === 'paused') v.auto_delete_at = iso(s.autoDeleteAt);
  if (s.network !== null) v.network = s.network;
  if (showNode && s.nodeId) v.node = s.nodeId;
  return v;
}

export const withToken = (s: SandboxRecord, view: Sandbox) => ({ ...view, access_token: s.accessToken });
