import { conflict, notFound, unavailable } from '../../errors.ts';
import { parseUuid } from '../../ids.ts';
import type { RuntimeDriver, SnapshotEngine } from '../../runtime/driver.ts';
import type { SnapshotStore } from '../../store/snapshots.ts';
import type { ForkSource } from '../sandboxes/sandboxes.ts';

/** The driver's snapshot engine; 503 on a driver that cannot capture memory. */
export function snapshotEngineOf(driver: RuntimeDriver): SnapshotEngine {
  const engine = driver.snapshots;
  if (!engine) {
    throw unavailable(`the ${driver.name} driver cannot capture a sandbox's memory; snapshots need a host running the gvisor driver`);
  }
  return engine;
}

/** Brings a snapshot another node holds to this one (several hosts). */
export type FetchSnapshot = (snapshot: { id: string; nodeId: string; templateId: string | null }) => Promise<void>;

/**
 * What POST /sandboxes {from_snapshot} starts from: a ready snapshot of the team, and the engine holding it.
 * On a node, a snapshot another node holds is fetched here first (placement sends a fork elsewhere when its holder is cordoned or full).
 */
export class SnapshotForks implements ForkSource {
  readonly #store: SnapshotStore;
  readonly #driver: RuntimeDriver;
  readonly #fetch: FetchSnapshot | undefined;

  constructor(store: SnapshotStore, driver: RuntimeDriver, fetch?: FetchSnapshot) {
    this.#store = store;
    this.#driver = driver;
    this.#fetch = fetch;
  }

  async forkSource(teamId: string, rawId: string) {
    const engine = snapshotEngineOf(this.#driver);
    const row = await this.#store.get(parseUuid(rawId, 'snapshot id'));
    if (!row || row.teamId !== teamId) throw notFound(`snapshot '${rawId}' not found`);
    if (row.status !== 'ready') throw conflict(`the snapshot is ${row.status}; only a ready snapshot can start a sandbox`);
    if (this.#fetch && row.nodeId && row.nodeId !== this.#store.node) await this.#fetch({ id: row.id, nodeId: row.nodeId, templateId: row.templateId });
    return { snapshotId: row.id, templateId: row.templateId, resources: row.resources, env: row.env, engine };
  }
}
