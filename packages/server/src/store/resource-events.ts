import type { Db } from './db.ts';
import { lockEventLog } from './locks.ts';

/** A snapshot's or template's lifecycle event, with the resource as the API shows it. */
export interface ResourceEvent {
  type: string;
  at: number;
  /** Deliveries with one key go out in order: a snapshot's sandbox, a template's id. */
  orderingKey: string;
  resource: unknown;
}

/** Appends inside the caller's transaction; commits in sequence order as sandbox_events do (readers go by cursor). */
export async function appendResourceEvent(tx: Db, e: ResourceEvent & { teamId: string; resourceType: string; resourceId: string }): Promise<void> {
  await lockEventLog(tx);
  await tx
    .insertInto('resource_events')
    .values({
      team_id: e.teamId,
      resource_type: e.resourceType,
      resource_id: e.resourceId,
      type: e.type,
      at: e.at,
      ordering_key: e.orderingKey,
      resource: JSON.stringify(e.resource),
    })
    .execute();
}
