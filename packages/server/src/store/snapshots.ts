import type { Selectable } from 'kysely';
import type { Db } from './db.ts';
import type { SnapshotTable } from './schema.ts';
import type { ResourcesRecord } from './sandboxes.ts';
import type { Keyset } from './keyset.ts';
import { appendResourceEvent, type ResourceEvent } from './resource-events.ts';

export type SnapshotStatus = 'creating' | 'ready' | 'failed' | 'deleting';

/** A snapshot row with its JSON columns parsed. */
export interface SnapshotRecord {
  id: string;
  teamId: string;
  sandboxId: string;
  templateId: string | null;
  kind: 'mem+fs';
  status: SnapshotStatus;
  name: string | null;
  sizeBytes: number;
  resources: ResourcesRecord;
  env: Record<string, string>;
  idempotencyKey: string | null;
  /** The node holding its files (several hosts); null or absent on a single host. */
  nodeId?: string | null;
  createdAt: number;
  readyAt: number | null;
  updatedAt: number;
  deletedAt: number | null;
}

function fromRow(r: Selectable<SnapshotTable>): SnapshotRecord {
  return {
    id: r.id,
    teamId: r.team_id,
    sandboxId: r.sandbox_id,
    templateId: r.template_id,
    kind: r.kind as 'mem+fs',
    status: r.status as SnapshotStatus,
    name: r.name,
    sizeBytes: Number(r.size_bytes),
    resources: JSON.parse(r.resources),
    env: JSON.parse(r.env),
    idempotencyKey: r.idempotency_key,
    nodeId: r.node_id,
    createdAt: Number(r.created_at),
    readyAt: r.ready_at === null ? null : Number(r.ready_at),
    updatedAt: Number(r.updated_at),
    deletedAt: r.deleted_at === null ? null : Number(r.deleted_at),
  };
}

function toRow(s: SnapshotRecord): SnapshotTable {
  return {
    id: s.id,
    team_id: s.teamId,
    sandbox_id: s.sandboxId,
    template_id: s.templateId,
    kind: s.kind,
    status: s.status,
    name: s.name,
    size_bytes: s.sizeBytes,
    resources: JSON.stringify(s.resources),
    env: JSON.stringify(s.env),
    idempotency_key: s.idempotencyKey,
    node_id: s.nodeId ?? null,
    created_at: s.createdAt,
    ready_at: s.readyAt,
    updated_at: s.updatedAt,
    deleted_at: s.deletedAt,
  };
}

export interface SnapshotListFilter {
  teamId: string;
  sandboxId?: string;
  /** Keyset position: items strictly after (createdAt, id) in descending order. */
  after?: Keyset;
  limit: number;
}

export class SnapshotStore {
  readonly db: Db;
  /** The node this process is: snapshots it makes are recorded there, and reconciliation sees only its own. Null: every row. */
  readonly node: string | null;
  constructor(db: Db, node: string | null = null) {
    this.db = db;
    this.node = node;
  }

  #local() {
    const q = this.db.selectFrom('snapshots').where('deleted_at', 'is', null);
    return this.node === null ? q : q.where('node_id', '=', this.node);
  }

  /** False when the sandbox already has a snapshot with this idempotency key (deleted ones included). */
  async insert(s: SnapshotRecord): Promise<boolean> {
    s.nodeId = this.node;
    try {
      await this.db.insertInto('snapshots').values(toRow(s)).execute();
      return true;
    } catch (err) {
      if (s.idempotencyKey !== null && /UNIQUE constraint failed/.test(String(err))) return false;
      throw err;
    }
  }

  /** A copy of the snapshot kept on another node adds its bytes to the snapshot's size (it holds that much more disk). */
  async addCopyBytes(id: string, bytes: number): Promise<void> {
    await this.db
      .updateTable('snapshots')
      .set((eb) => ({ size_bytes: eb('size_bytes', '+', bytes) }))
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .execute();
  }

  /** Writes the row; `event` (snapshot.ready, snapshot.failed) is appended to resource_events in the same transaction. */
  async save(s: SnapshotRecord, event?: ResourceEvent): Promise<void> {
    const { id: _id, node_id: _node, ...rest } = toRow(s);
    if (!event) {
      await this.db.updateTable('snapshots').set(rest).where('id', '=', s.id).execute();
      return;
    }
    await this.db.transaction().execute(async (tx) => {
      await tx.updateTable('snapshots').set(rest).where('id', '=', s.id).execute();
      await appendResourceEvent(tx, { ...event, teamId: s.teamId, resourceType: 'snapshot', resourceId: s.id });
    });
  }

  /** Removes a row outright: for a request that made nothing (refused capture), so its key can be used again. */
  async remove(id: string): Promise<void> {
    await this.db.deleteFrom('snapshots').where('id', '=', id).execute();
  }

  /** A live snapshot. */
  async get(id: string): Promise<SnapshotRecord | undefined> {
    const row = await this.db.selectFrom('snapshots').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    return row && fromRow(row);
  }

  /** The snapshot an earlier request with this key made, deleted or not. */
  async byKey(sandboxId: string, key: string): Promise<SnapshotRecord | undefined> {
    const row = await this.db.selectFrom('snapshots').selectAll().where('sandbox_id', '=', sandboxId).where('idempotency_key', '=', key).executeTakeFirst();
    return row && fromRow(row);
  }

  async list(f: SnapshotListFilter): Promise<SnapshotRecord[]> {
    let q = this.db.selectFrom('snapshots').selectAll().where('team_id', '=', f.teamId).where('deleted_at', 'is', null);
    if (f.sandboxId) q = q.where('sandbox_id', '=', f.sandboxId);
    if (f.after) {
      const { createdAt, id } = f.after;
      q = q.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
    return rows.map(fromRow);
  }

  /** Rows a crash may have left mid-way (creating, deleting), across teams. */
  async unsettled(): Promise<SnapshotRecord[]> {
    const rows = await this.#local().selectAll().where('status', 'in', ['creating', 'deleting']).execute();
    return rows.map(fromRow);
  }

  /** Ids of every live snapshot (of this node), across teams. */
  async liveIds(): Promise<Set<string>> {
    const rows = await this.#local().select('id').execute();
    return new Set(rows.map((r) => r.id));
  }
}
