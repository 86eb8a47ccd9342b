import { conflict, notFound, unavailable } from '../errors.ts';
import { parseUuid } from '../ids.ts';
import type { RuntimeDriver, SnapshotEngine } from '../runtime/driver.ts';
import type { SnapshotStore } from '../store/snapshots.ts';
import type { ForkSource } from './sandboxes.ts';

/** The driver's snapshot engine; 503 on a driver that cannot capture memory. */
export function snapshotEngineOf(driver: RuntimeDriver): SnapshotEngine {
  const engine = driver.snapshots;
  if (!engine) {
    throw unavailable(`the ${driver.name} driver cannot capture a sandbox's memory; snapshots need a host running the gvisor driver`);
  }
  return engine;
}

/** What POST /sandboxes {from_snapshot} starts from: a ready snapshot of the team, and the engine holding it. */
export class SnapshotForks implements ForkSource {
  readonly #store: SnapshotStore;
  readonly #driver: RuntimeDriver;

  constructor(store: SnapshotStore, driver: RuntimeDriver) {
    this.#store = store;
    this.#driver = driver;
  }

  async forkSource(teamId: string, rawId: string) {
    const engine = snapshotEngineOf(this.#driver);
    const row = await this.#store.get(parseUuid(rawId, 'snapshot id'));
    if (!row || row.teamId !== teamId) throw notFound(`snapshot '${rawId}' not found`);
    if (row.status !== 'ready') throw conflict(`the snapshot is ${row.status}; only a ready snapshot can start a sandbox`);
    return { snapshotId: row.id, templateId: row.templateId, resources: row.resources, env: row.env, engine };
  }
}
