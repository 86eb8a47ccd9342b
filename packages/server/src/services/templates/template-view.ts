import { iso } from '../../clock.ts';
import type { TemplateRecord } from '../../store/templates.ts';

/** The API shape of a template; `poolReady`: its warm sandboxes ready now. */
export function templateView(t: TemplateRecord, poolReady: number) {
  const d = t.definition;
  return {
    id: t.id,
    name: t.name,
    curated: t.teamId === '',
    status: t.status,
    ...(t.status === 'failed' && t.error ? { error: t.error } : {}),
    usable: t.version !== null || t.status === 'pending',
    base: d.base,
    ...(d.fromImage ? { from_image: d.fromImage } : {}),
    steps: d.steps,
    ...(d.startCmd ? { start_cmd: d.startCmd } : {}),
    ...(d.readyCmd ? { ready_cmd: d.readyCmd } : {}),
    ready_timeout_s: d.readyTimeoutS,
    warm_pool: d.warmPool,
    warm_pool_ready: poolReady,
    captured: t.capture !== null && t.capture.versionKey === t.version?.key,
    ...(t.latestBuildId ? { latest_build_id: t.latestBuildId } : {}),
    resources: { vcpu_count: 1, memory_mib: 1024, disk_mib: 4096 },
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
  };
}
