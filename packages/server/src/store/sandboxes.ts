import type { Selectable } from 'kysely';
import type { Db } from './db.ts';
import type { SandboxTable } from './schema.ts';
import type { Keyset } from './keyset.ts';
import { lockEventLog } from './locks.ts';
import { prepared } from './prepared.ts';

export type SandboxStatus = 'active' | 'pausing' | 'paused' | 'resuming' | 'migrating' | 'failed';

export interface NetworkRules {
  allow_out?: string[];
  deny_out?: string[];
}

export interface ResourcesRecord {
  vcpu_count: number;
  memory_mib: number;
  disk_mib: number;
}

/** A sandbox row with its JSON columns parsed. */
export interface SandboxRecord {
  id: string;
  teamId: string;
  name: string | null;
  templateId: string;
  driver: string;
  region: string;
  status: SandboxStatus;
  metadata: Record<string, string>;
  env: Record<string, string>;
  network: NetworkRules | null;
  secrets: Record<string, string>;
  previewAccess: 'legacy_public' | 'public' | 'private';
  resources: ResourcesRecord;
  accessToken: string;
  autoPauseSeconds: number | null;
  autoDeleteSeconds: number | null;
  autoPauseAt: number | null;
  autoDeleteAt: number | null;
  activeSince: number | null;
  pausedAt: number | null;
  latestSnapshotId: string | null;
  /** An auto-pause keeps only the disk: processes end, and resume boots afresh from the disk. */
  autoPauseDiskOnly: boolean;
  /** Paused keeping only its disk: resume boots afresh, so it is never resumed by traffic alone. */
  pausedDiskOnly: boolean;
  /** Set with status failed: why, as a stable code. */
  failureReason?: string | null;
  /** The node holding it (several hosts); null or absent on a single host. */
  nodeId?: string | null;
  createdAt: number;
  updatedAt: number;
  deletedAt: number | null;
}

function fromRow(r: Selectable<SandboxTable>): SandboxRecord {
  return {
    id: r.id,
    teamId: r.team_id,
    name: r.name,
    templateId: r.template_id,
    driver: r.driver,
    region: r.region,
    status: r.status as SandboxStatus,
    metadata: JSON.parse(r.metadata),
    env: JSON.parse(r.env),
    network: r.network === null ? null : JSON.parse(r.network),
    secrets: JSON.parse(r.secrets),
    previewAccess: r.preview_access as SandboxRecord['previewAccess'],
    resources: JSON.parse(r.resources),
    accessToken: r.access_token,
    autoPauseSeconds: r.auto_pause_seconds,
    autoDeleteSeconds: r.auto_delete_seconds,
    autoPauseAt: r.auto_pause_at === null ? null : Number(r.auto_pause_at),
    autoDeleteAt: r.auto_delete_at === null ? null : Number(r.auto_delete_at),
    activeSince: r.active_since === null ? null : Number(r.active_since),
    pausedAt: r.paused_at === null ? null : Number(r.paused_at),
    latestSnapshotId: r.latest_snapshot_id,
    autoPauseDiskOnly: r.auto_pause_disk_only === 1,
    pausedDiskOnly: r.paused_disk_only === 1,
    failureReason: r.failure_reason,
    nodeId: r.node_id,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    deletedAt: r.deleted_at === null ? null : Number(r.deleted_at),
  };
}

function toRow(s: SandboxRecord): SandboxTable {
  return {
    id: s.id,
    team_id: s.teamId,
    name: s.name,
    template_id: s.templateId,
    driver: s.driver,
    region: s.region,
    status: s.status,
    metadata: JSON.stringify(s.metadata),
    env: JSON.stringify(s.env),
    network: s.network === null ? null : JSON.stringify(s.network),
    secrets: JSON.stringify(s.secrets),
    preview_access: s.previewAccess,
    resources: JSON.stringify(s.resources),
    access_token: s.accessToken,
    auto_pause_seconds: s.autoPauseSeconds,
    auto_delete_seconds: s.autoDeleteSeconds,
    auto_pause_at: s.autoPauseAt,
    auto_delete_at: s.autoDeleteAt,
    active_since: s.activeSince,
    paused_at: s.pausedAt,
    latest_snapshot_id: s.latestSnapshotId,
    auto_pause_disk_only: s.autoPauseDiskOnly ? 1 : null,
    paused_disk_only: s.pausedDiskOnly ? 1 : null,
    failure_reason: s.failureReason ?? null,
    node_id: s.nodeId ?? null,
    vcpu_count: s.resources.vcpu_count,
    memory_mib: s.resources.memory_mib,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    deleted_at: s.deletedAt,
  };
}

export interface ListFilter {
  teamId: string;
  statuses?: string[];
  metadata?: [string, string][];
  /** Keyset position: items strictly after (createdAt, id) in descending order. */
  after?: Keyset;
  limit: number;
}

export class SandboxStore {
  readonly db: Db;
  /**
   * The node this process is (several hosts): its inserts are recorded there, and the lists the
   * engine side works from (reconcile, timers, health) hold only its sandboxes. Null: every row.
   */
  readonly node: string | null;
  // The reads behind GET /sandboxes/{id} (and every route on one sandbox) and an unfiltered list page.
  readonly #byId;
  readonly #firstPage;
  readonly #pageAfter;
  /** The sandbox as the API shows it, kept with each lifecycle event (webhooks send it). */
  readonly #describe: (s: SandboxRecord) => unknown;
  constructor(db: Db, node: string | null = null, describe: (s: SandboxRecord) => unknown = () => null) {
    this.db = db;
    this.node = node;
    this.#describe = describe;
    this.#byId = prepared(db, (id: string) => db.selectFrom('sandboxes').selectAll().where('id', '=', id).where('deleted_at', 'is', null));
    const page = (teamId: string) => db.selectFrom('sandboxes').selectAll().where('team_id', '=', teamId).where('deleted_at', 'is', null);
    this.#firstPage = prepared(db, (teamId: string, limit: number) => page(teamId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit));
    this.#pageAfter = prepared(db, (teamId: string, createdAt: number, id: string, limit: number) =>
      page(teamId)
        .where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(createdAt, id)))
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit),
    );
  }

  async insert(s: SandboxRecord, eventType: string): Promise<void> {
    s.nodeId = this.node;
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('sandboxes').values(toRow(s)).execute();
      await insertMetadata(tx, s);
      await lockEventLog(tx);
      await tx
        .insertInto('sandbox_events')
        .values({ sandbox_id: s.id, team_id: s.teamId, type: eventType, at: s.createdAt, data: null, resource: this.#resource(s) })
        .execute();
    });
  }

  /** Writes the whole record; `event` appends a lifecycle event in the same transaction. */
  async save(s: SandboxRecord, event?: { type: string; at: number; data?: unknown }, metadataChanged = false): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      // Where a sandbox lives is written once, at insert.
      const { id: _id, node_id: _node, ...rest } = toRow(s);
      // A deleted row stays deleted, and a sandbox failed for its lost node stays failed until it is deleted:
      // a node that was only silent must not write its older view over the store's (several hosts).
      let update = tx.updateTable('sandboxes').set(rest).where('id', '=', s.id).where('deleted_at', 'is', null);
      if (s.deletedAt === null) update = update.where((eb) => eb.or([eb('failure_reason', 'is', null), eb('failure_reason', '<>', 'node_lost')]));
      const done = await update.executeTakeFirst();
      if (Number(done.numUpdatedRows) === 0) return;
      // Metadata rows serve list filters of live sandboxes only.
      if (metadataChanged || s.deletedAt !== null) {
        await tx.deleteFrom('sandbox_metadata').where('sandbox_id', '=', s.id).execute();
        if (s.deletedAt === null) await insertMetadata(tx, s);
      }
      // Its files are gone, and with them their metadata.
      if (s.deletedAt !== null) await tx.deleteFrom('file_metadata').where('sandbox_id', '=', s.id).execute();
      if (event) {
        await lockEventLog(tx);
        await tx
          .insertInto('sandbox_events')
          .values({ sandbox_id: s.id, team_id: s.teamId, type: event.type, at: event.at, data: event.data === undefined ? null : JSON.stringify(event.data), resource: this.#resource(s) })
          .execute();
      }
    });
  }

  #resource(s: SandboxRecord): string | null {
    const v = this.#describe(s);
    return v === null ? null : JSON.stringify(v);
  }

  async get(id: string): Promise<SandboxRecord | undefined> {
    const [row] = await this.#byId(id);
    return row && fromRow(row);
  }

  async list(f: ListFilter): Promise<SandboxRecord[]> {
    const [first, ...more] = f.metadata ?? [];
    if (first) return this.#listByMetadata(f, first, more);
    const statuses = f.statuses ?? [];
    if (statuses.length === 0) {
      const rows = f.after ? await this.#pageAfter(f.teamId, f.after.createdAt, f.after.id, f.limit) : await this.#firstPage(f.teamId, f.limit);
      return rows.map(fromRow);
    }
    let q = this.db.selectFrom('sandboxes').selectAll().where('team_id', '=', f.teamId).where('deleted_at', 'is', null).where('status', 'in', statuses);
    if (f.after) {
      const { createdAt, id } = f.after;
      // A row-value bound: both engines seek to it in the live index instead of filtering every row before it.
      q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(createdAt, id)));
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
    return rows.map(fromRow);
  }

  /**
   * The first metadata pair's index entries are read in list order (team, key, value, created_at,
   * id), so a page costs its own rows however many sandboxes match; further pairs are checked per
   * row; the cursor is a row-value bound, as in `list`.
   */
  async #listByMetadata(f: ListFilter, [key, value]: [string, string], more: [string, string][]): Promise<SandboxRecord[]> {
    let q = this.db
      .selectFrom('sandbox_metadata as m')
      .innerJoin('sandboxes', 'sandboxes.id', 'm.sandbox_id')
      .selectAll('sandboxes')
      .where('m.team_id', '=', f.teamId)
      .where('m.key', '=', key)
      .where('m.value', '=', value)
      .where('sandboxes.deleted_at', 'is', null);
    if (f.statuses && f.statuses.length > 0) q = q.where('sandboxes.status', 'in', f.statuses);
    for (const [k, v] of more) {
      q = q.where('sandboxes.id', 'in', (eb) =>
        eb
          .selectFrom('sandbox_metadata')
          .select('sandbox_metadata.sandbox_id')
          .where('sandbox_metadata.team_id', '=', f.teamId)
          .where('sandbox_metadata.key', '=', k)
          .where('sandbox_metadata.value', '=', v),
      );
    }
    if (f.after) {
      const { createdAt, id } = f.after;
      q = q.where((eb) => eb(eb.refTuple('m.created_at', 'm.sandbox_id'), '<', eb.tuple(createdAt, id)));
    }
    const rows = await q.orderBy('m.created_at', 'desc').orderBy('m.sandbox_id', 'desc').limit(f.limit).execute();
    return rows.map(fromRow);
  }

  /** Live rows of this node (every live row on a single host). */
  #local() {
    const q = this.db.selectFrom('sandboxes').where('deleted_at', 'is', null);
    return this.node === null ? q : q.where('node_id', '=', this.node);
  }

  /** Ids of the sandboxes recorded active: what the engine health watch looks at every few seconds. */
  async activeIds(): Promise<string[]> {
    const rows = await this.#local().select('id').where('status', '=', 'active').execute();
    return rows.map((r) => r.id);
  }

  /** Every sandbox that is not deleted (of this node): for reconciliation and timers. */
  async listLive(): Promise<SandboxRecord[]> {
    const rows = await this.#local().selectAll().execute();
    return rows.map(fromRow);
  }

  async dueForAutoPause(now: number): Promise<string[]> {
    const rows = await this.#local().select('id').where('status', '=', 'active').where('auto_pause_at', '<=', now).execute();
    return rows.map((r) => r.id);
  }

  async dueForAutoDelete(now: number): Promise<string[]> {
    const rows = await this.#local().select('id').where('status', '=', 'paused').where('auto_delete_at', '<=', now).execute();
    return rows.map((r) => r.id);
  }

  /** Every live sandbox placed on a node: where it is and its status (the operator's cluster status). */
  async liveByNode(): Promise<{ id: string; region: string; nodeId: string; status: string }[]> {
    const rows = await this.db.selectFrom('sandboxes').select(['id', 'region', 'node_id', 'status']).where('deleted_at', 'is', null).where('node_id', 'is not', null).orderBy('created_at').execute();
    return rows.map((r) => ({ id: r.id, region: r.region, nodeId: r.node_id!, status: r.status }));
  }

  /** A node's live sandboxes: the paused and active ones (which a drain moves) and how many others (in a transition, failed) there are. */
  async onNode(nodeId: string): Promise<{ movable: SandboxRecord[]; others: number }> {
    const rows = await this.db.selectFrom('sandboxes').selectAll().where('node_id', '=', nodeId).where('deleted_at', 'is', null).execute();
    const movable = rows.filter((r) => r.status === 'paused' || r.status === 'active').map(fromRow);
    return { movable, others: rows.length - movable.length };
  }

  /**
   * Moves a paused sandbox's record from node `from` to `to`, and marks `from` as moved out of (API replicas
   * drop their cached locations on it), in one transaction; false when it is no longer `status` (paused, or
   * migrating for a running one) there.
   */
  async moveNode(id: string, from: string, to: string, now: number, status: 'paused' | 'migrating' = 'paused'): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const r = await tx
        .updateTable('sandboxes')
        .set({ node_id: to, updated_at: now })
        .where('id', '=', id)
        .where('node_id', '=', from)
        .where('status', '=', status)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return false;
      await tx.updateTable('nodes').set({ moved_out_at: now }).where('id', '=', from).execute();
      return true;
    });
  }

  /**
   * A lost node's live sandboxes end failed with `reason` in one transaction, each with its
   * `failed` event (metering closes their segments); returns their ids.
   */
  async failOnNode(nodeId: string, reason: string, now: number): Promise<string[]> {
    return this.db.transaction().execute(async (tx) => {
      const rows = await tx.selectFrom('sandboxes').selectAll().where('node_id', '=', nodeId).where('deleted_at', 'is', null).where('status', '<>', 'failed').execute();
      if (rows.length === 0) return [];
      const ids = rows.map((r) => r.id);
      await tx
        .updateTable('sandboxes')
        .set({ status: 'failed', failure_reason: reason, active_since: null, auto_pause_at: null, auto_delete_at: null, updated_at: now })
        .where('id', 'in', ids)
        .execute();
      await lockEventLog(tx);
      await tx
        .insertInto('sandbox_events')
        .values(
          rows.map((r) => {
            const failed: SandboxRecord = { ...fromRow(r), status: 'failed', failureReason: reason, activeSince: null, autoPauseAt: null, autoDeleteAt: null, updatedAt: now };
            return { sandbox_id: r.id, team_id: r.team_id, type: 'failed', at: now, data: JSON.stringify({ reason }), resource: this.#resource(failed) };
          }),
        )
        .execute();
      return ids;
    });
  }
}

async function insertMetadata(tx: Db, s: SandboxRecord): Promise<void> {
  const rows = Object.entries(s.metadata).map(([key, value]) => ({ sandbox_id: s.id, key, value, team_id: s.teamId, created_at: s.createdAt }));
  if (rows.length > 0) await tx.insertInto('sandbox_metadata').values(rows).execute();
}
