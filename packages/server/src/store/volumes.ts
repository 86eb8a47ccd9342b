import type { Selectable } from 'kysely';
import { isUuid } from '../ids.ts';
import type { Db } from './db.ts';
import type { Keyset } from './keyset.ts';
import type { VolumeTable } from './schema.ts';

export interface VolumeRecord {
  id: string;
  teamId: string;
  name: string;
  sizeMib: number;
  nodeId: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface VolumeMountRecord {
  sandboxId: string;
  volumeId: string;
  path: string;
  readOnly: boolean;
}

function fromRow(r: Selectable<VolumeTable>): VolumeRecord {
  return { id: r.id, teamId: r.team_id, name: r.name, sizeMib: Number(r.size_mib), nodeId: r.node_id, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at) };
}

/** Volumes and their mounts. */
export class VolumeStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** False when the team already has a volume of that name. */
  async insert(v: VolumeRecord): Promise<boolean> {
    try {
      await this.db.insertInto('volumes').values({ id: v.id, team_id: v.teamId, name: v.name, size_mib: v.sizeMib, node_id: v.nodeId, created_at: v.createdAt, updated_at: v.updatedAt }).execute();
      return true;
    } catch (err) {
      if (/UNIQUE constraint failed|duplicate key/.test(String(err))) return false;
      throw err;
    }
  }

  async get(id: string): Promise<VolumeRecord | undefined> {
    const row = await this.db.selectFrom('volumes').selectAll().where('id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  async byName(teamId: string, name: string): Promise<VolumeRecord | undefined> {
    const row = await this.db.selectFrom('volumes').selectAll().where('team_id', '=', teamId).where('name', '=', name).executeTakeFirst();
    return row && fromRow(row);
  }

  /** The team's volume by id or name (`{id_or_name}` in paths and mounts); undefined when the team has none such. */
  async ofTeam(teamId: string, ref: string): Promise<VolumeRecord | undefined> {
    const rec = isUuid(ref) ? await this.get(ref.toLowerCase()) : await this.byName(teamId, ref);
    return rec?.teamId === teamId ? rec : undefined;
  }

  async list(teamId: string, after: Keyset | undefined, limit: number): Promise<VolumeRecord[]> {
    let q = this.db.selectFrom('volumes').selectAll().where('team_id', '=', teamId);
    if (after) {
      const { createdAt, id } = after;
      q = q.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(fromRow);
  }

  /** Every volume, across teams (reconciling the host's subvolumes, metering). */
  async all(): Promise<VolumeRecord[]> {
    return (await this.db.selectFrom('volumes').selectAll().execute()).map(fromRow);
  }

  async resize(id: string, sizeMib: number, now: number): Promise<void> {
    await this.db.updateTable('volumes').set({ size_mib: sizeMib, updated_at: now }).where('id', '=', id).execute();
  }

  async remove(id: string): Promise<void> {
    await this.db.deleteFrom('volumes').where('id', '=', id).execute();
  }

  async addMounts(mounts: VolumeMountRecord[], now: number): Promise<void> {
    if (mounts.length === 0) return;
    await this.db
      .insertInto('volume_mounts')
      .values(mounts.map((m) => ({ sandbox_id: m.sandboxId, volume_id: m.volumeId, path: m.path, read_only: m.readOnly ? 1 : 0, created_at: now })))
      .execute();
  }

  async removeMounts(sandboxId: string): Promise<void> {
    await this.db.deleteFrom('volume_mounts').where('sandbox_id', '=', sandboxId).execute();
  }

  /** The sandbox a snapshot was taken of: its mount rows are what the snapshot recorded. */
  async snapshotSandbox(snapshotId: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('snapshots').select('sandbox_id').where('id', '=', snapshotId).executeTakeFirst();
    return row?.sandbox_id;
  }

  /** The mounts of these sandboxes, by sandbox and path. */
  async mountsOf(sandboxIds: readonly string[]): Promise<VolumeMountRecord[]> {
    if (sandboxIds.length === 0) return [];
    const rows = await this.db.selectFrom('volume_mounts').selectAll().where('sandbox_id', 'in', sandboxIds).orderBy('sandbox_id').orderBy('path').execute();
    return rows.map((r) => ({ sandboxId: r.sandbox_id, volumeId: r.volume_id, path: r.path, readOnly: Number(r.read_only) === 1 }));
  }

  /**
   * Sandboxes that mount the volume: those not deleted, and those not recorded yet (being created,
   * unless older than `staleBefore`: a create a crash cut short). Rows of the others are dropped.
   */
  async mountedBy(volumeId: string, staleBefore: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('volume_mounts')
      .leftJoin('sandboxes', 'sandboxes.id', 'volume_mounts.sandbox_id')
      .select(['volume_mounts.sandbox_id as sandbox_id', 'volume_mounts.created_at as created_at', 'sandboxes.deleted_at as deleted_at', 'sandboxes.id as known'])
      .where('volume_mounts.volume_id', '=', volumeId)
      .execute();
    const live = (r: (typeof rows)[number]) => (r.known === null ? Number(r.created_at) >= staleBefore : r.deleted_at === null);
    const gone = rows.filter((r) => !live(r)).map((r) => r.sandbox_id);
    if (gone.length > 0) await this.db.deleteFrom('volume_mounts').where('sandbox_id', 'in', gone).execute();
    return [...new Set(rows.filter(live).map((r) => r.sandbox_id))];
  }
}
