import type { Selectable } from 'kysely';
import type { Db } from './db.ts';
import type { NodeTable } from './schema.ts';

export type NodeState = 'ready' | 'cordoned' | 'draining';

/** What a node says of itself in each heartbeat. */
export interface NodeReport {
  id: string;
  region: string;
  url: string;
  vcpus: number;
  memoryMib: number;
  diskMib: number;
  maxSandboxes: number;
  engines: string[];
  labels: Record<string, string>;
  /** Template version keys whose files it holds. */
  templates: string[];
  /** What its live sandboxes hold. */
  allocated: NodeLoad;
}

export interface NodeRecord extends NodeReport {
  state: NodeState;
  registeredAt: number;
  heartbeatAt: number;
  lostAt: number | null;
  /** When a sandbox last moved off it: caches of where sandboxes live are stale for it once this changes. */
  movedOutAt: number | null;
}

/** A node's sandboxes that hold capacity (every live one but failed), and what they were given. */
export interface NodeLoad {
  sandboxes: number;
  vcpus: number;
  memoryMib: number;
}

function fromRow(r: Selectable<NodeTable>): NodeRecord {
  return {
    id: r.id,
    region: r.region,
    url: r.url,
    vcpus: r.vcpus,
    memoryMib: r.memory_mib,
    diskMib: r.disk_mib,
    maxSandboxes: r.max_sandboxes,
    engines: JSON.parse(r.engines),
    labels: JSON.parse(r.labels),
    templates: JSON.parse(r.templates),
    allocated: { sandboxes: r.sandboxes, vcpus: r.allocated_vcpus, memoryMib: r.allocated_memory_mib },
    state: r.state as NodeState,
    registeredAt: Number(r.registered_at),
    heartbeatAt: Number(r.heartbeat_at),
    lostAt: r.lost_at === null ? null : Number(r.lost_at),
    movedOutAt: r.moved_out_at === null ? null : Number(r.moved_out_at),
  };
}

export class NodeStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Records a heartbeat; returns when the node had been marked lost before it (it must reconcile), else null. */
  async heartbeat(n: NodeReport, now: number): Promise<{ wasLostAt: number | null }> {
    const before = await this.db.selectFrom('nodes').select('lost_at').where('id', '=', n.id).executeTakeFirst();
    const row = {
      region: n.region,
      url: n.url,
      vcpus: n.vcpus,
      memory_mib: n.memoryMib,
      disk_mib: n.diskMib,
      max_sandboxes: n.maxSandboxes,
      engines: JSON.stringify(n.engines),
      labels: JSON.stringify(n.labels),
      templates: JSON.stringify(n.templates),
      sandboxes: n.allocated.sandboxes,
      allocated_vcpus: n.allocated.vcpus,
      allocated_memory_mib: n.allocated.memoryMib,
      heartbeat_at: now,
      lost_at: null,
    };
    await this.db
      .insertInto('nodes')
      .values({ id: n.id, ...row, state: 'ready', registered_at: now, moved_out_at: null })
      .onConflict((oc) => oc.column('id').doUpdateSet(row))
      .execute();
    return { wasLostAt: before?.lost_at == null ? null : Number(before.lost_at) };
  }

  async get(id: string): Promise<NodeRecord | undefined> {
    const row = await this.db.selectFrom('nodes').selectAll().where('id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  async list(region?: string): Promise<NodeRecord[]> {
    let q = this.db.selectFrom('nodes').selectAll();
    if (region !== undefined) q = q.where('region', '=', region);
    return (await q.orderBy('id').execute()).map(fromRow);
  }

  async setState(id: string, state: NodeState): Promise<boolean> {
    const r = await this.db.updateTable('nodes').set({ state }).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Marks the region's nodes silent since before `deadline` lost (once); returns the ids newly marked. */
  async markLost(region: string, deadline: number, now: number): Promise<string[]> {
    const rows = await this.db.updateTable('nodes').set({ lost_at: now }).where('region', '=', region).where('heartbeat_at', '<', deadline).where('lost_at', 'is', null).returning('id').execute();
    return rows.map((r) => r.id);
  }

  /** Capacity held on each of these nodes. */
  async load(ids: string[]): Promise<Map<string, NodeLoad>> {
    const out = new Map<string, NodeLoad>();
    if (ids.length === 0) return out;
    const rows = await this.db
      .selectFrom('sandboxes')
      .select((eb) => ['node_id', eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('vcpu_count').as('vcpus'), eb.fn.sum<number>('memory_mib').as('memory')])
      .where('node_id', 'in', ids)
      .where('deleted_at', 'is', null)
      .where('status', '<>', 'failed')
      .groupBy('node_id')
      .execute();
    for (const r of rows) out.set(r.node_id!, { sandboxes: Number(r.n), vcpus: Number(r.vcpus), memoryMib: Number(r.memory) });
    return out;
  }

  /** Where a sandbox, snapshot or template build lives: its node's id, or null on a single host; undefined when there is no such live row. */
  async sandboxNode(id: string): Promise<string | null | undefined> {
    const r = await this.db.selectFrom('sandboxes').select('node_id').where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    return r === undefined ? undefined : r.node_id;
  }

  async snapshotNode(id: string): Promise<string | null | undefined> {
    const r = await this.db.selectFrom('snapshots').select('node_id').where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    return r === undefined ? undefined : r.node_id;
  }

  async buildNode(id: string): Promise<string | null | undefined> {
    const r = await this.db.selectFrom('template_builds').select('node_id').where('id', '=', id).executeTakeFirst();
    return r === undefined ? undefined : r.node_id;
  }
}
