import type { Clock } from '../../clock.ts';
import { ApiError, badRequest, conflict, notFound, tooMany, unavailable } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { BindMount } from '../../runtime/driver.ts';
import { KeyedLock } from '../../runtime/host/keyed-lock.ts';
import type { VolumeDisks } from '../../runtime/host/volume-disks.ts';
import type { CreateVolumeBody, PatchVolumeBody, Volume, VolumeMount } from '../../schemas/volume.ts';
import type { VolumeMountRecord, VolumeRecord, VolumeStore } from '../../store/volumes.ts';
import type { Principal } from '../access/principal.ts';
import { keysetPage, type PageQuery } from '../paging.ts';
import { checkMountPaths, checkVolumeName } from './volume-rules.ts';

export interface VolumeServiceDeps {
  store: VolumeStore;
  /** The host's volume disks; absent on an API replica (several hosts), whose volumes live on nodes. */
  disks?: VolumeDisks;
  clock: Clock;
  /** On an API replica: the bytes a volume holds, asked of the node keeping it. */
  remoteUsage?: (rec: VolumeRecord) => Promise<number>;
  /** The node this process is (several hosts), recorded as where a volume lives. */
  nodeId: string | null;
  maxPerTeam: number;
}

/** A sandbox being created that has not been recorded after this long was cut short by a crash: its mounts no longer count. */
const CREATE_STALE_MS = 15 * 60_000;

/** Volumes: a team's disks that outlive sandboxes, and the mounts sandboxes make of them. */
export class VolumeService {
  readonly #d: VolumeServiceDeps;
  /** Per volume: a delete and the mounts of a create never interleave. */
  readonly #lock = new KeyedLock();

  constructor(deps: VolumeServiceDeps) {
    this.#d = deps;
  }

  #disks(): VolumeDisks {
    if (!this.#d.disks) throw unavailable('this host keeps no volumes');
    return this.#d.disks;
  }

  /** A volume of another node is not on this host's disks: the API replica sends its requests to that node. */
  #here(rec: VolumeRecord): void {
    if (this.#d.nodeId !== null && rec.nodeId !== null && rec.nodeId !== this.#d.nodeId) throw conflict(`volume '${rec.name}' lives on node '${rec.nodeId}', not on this one`);
  }

  async create(p: Principal, body: CreateVolumeBody): Promise<VolumeRecord> {
    checkVolumeName(body.name);
    const disks = this.#disks();
    const count = (await this.#d.store.list(p.teamId, undefined, this.#d.maxPerTeam + 1)).length;
    if (count >= this.#d.maxPerTeam) throw tooMany('too_many_volumes', `the team has ${count} volumes, the limit is ${this.#d.maxPerTeam}; delete one`);
    const now = this.#d.clock.now();
    const rec: VolumeRecord = { id: newId(), teamId: p.teamId, name: body.name, sizeMib: body.size_mib, nodeId: this.#d.nodeId, createdAt: now, updatedAt: now };
    if (!(await this.#d.store.insert(rec))) throw conflict(`the team already has a volume named '${body.name}'`);
    try {
      await disks.create(rec.id, rec.sizeMib);
    } catch (err) {
      await disks.remove(rec.id).catch(() => undefined);
      await this.#d.store.remove(rec.id);
      throw err;
    }
    return rec;
  }

  async get(p: Principal, idOrName: string): Promise<VolumeRecord> {
    const rec = await this.#d.store.ofTeam(p.teamId, idOrName);
    if (!rec) throw notFound(`volume '${idOrName.slice(0, 64)}' not found`);
    return rec;
  }

  list(p: Principal, q: PageQuery): Promise<{ items: VolumeRecord[]; nextCursor?: string }> {
    return keysetPage(q, (after, limit) => this.#d.store.list(p.teamId, after, limit));
  }

  /** Grows the quota; shrinking is refused (files past the new size would have nowhere to go). */
  async patch(p: Principal, idOrName: string, body: PatchVolumeBody): Promise<VolumeRecord> {
    const rec = await this.get(p, idOrName);
    this.#here(rec);
    return this.#lock.run(rec.id, async () => {
      if (body.size_mib < rec.sizeMib) throw badRequest(`size_mib can only grow (now ${rec.sizeMib})`);
      if (body.size_mib === rec.sizeMib) return rec;
      await this.#disks().resize(rec.id, body.size_mib);
      const now = this.#d.clock.now();
      await this.#d.store.resize(rec.id, body.size_mib, now);
      return { ...rec, sizeMib: body.size_mib, updatedAt: now };
    });
  }

  /** Refused while a sandbox mounts it; afterwards final: its files leave the host. */
  async delete(p: Principal, idOrName: string): Promise<void> {
    const rec = await this.get(p, idOrName);
    this.#here(rec);
    await this.#lock.run(rec.id, async () => {
      const users = await this.mountedBy(rec.id);
      if (users.length > 0) throw conflict(`volume '${rec.name}' is mounted by ${users.length} sandbox(es) (${users.slice(0, 3).join(', ')}); delete them first`);
      await this.#disks().remove(rec.id);
      await this.#d.store.remove(rec.id);
    });
  }

  mountedBy(volumeId: string): Promise<string[]> {
    return this.#d.store.mountedBy(volumeId, this.#d.clock.now() - CREATE_STALE_MS);
  }

  /** The volume's root on this host (503 where volumes are not kept). */
  rootOf(rec: VolumeRecord): string {
    this.#here(rec);
    return this.#disks().path(rec.id);
  }

  async usage(rec: VolumeRecord): Promise<number> {
    if (!this.#d.disks) return this.#d.remoteUsage ? this.#d.remoteUsage(rec) : 0;
    if (this.#d.nodeId !== null && rec.nodeId !== this.#d.nodeId) return 0;
    return this.#d.disks.usage(rec.id).catch(() => 0);
  }

  /** Bytes a volume this host keeps holds (asked by API replicas for their lists); undefined for one it does not keep. */
  async usageHere(id: string): Promise<number | undefined> {
    const rec = await this.#d.store.get(id);
    if (!rec || !this.#d.disks || rec.nodeId !== this.#d.nodeId) return undefined;
    return this.usage(rec);
  }

  async view(rec: VolumeRecord): Promise<Volume> {
    const [used, users] = await Promise.all([this.usage(rec), this.mountedBy(rec.id)]);
    return { id: rec.id, name: rec.name, size_mib: rec.sizeMib, used_bytes: used, mounted_by: users, created_at: new Date(rec.createdAt).toISOString() };
  }

  /**
   * Records the mounts of sandbox `sandboxId` being created (so a delete of those volumes waits for
   * it and then refuses) and returns the engine's bind mounts. `release` undoes it if the create fails.
   */
  async attach(teamId: string, sandboxId: string, mounts: readonly VolumeMount[]): Promise<BindMount[]> {
    checkMountPaths(mounts);
    const p = { teamId } as Principal;
    const resolved = await Promise.all(mounts.map(async (m) => ({ m, rec: await this.get(p, m.volume).catch(() => undefined) })));
    const missing = resolved.find((r) => !r.rec);
    if (missing) throw new ApiError(404, 'not_found', `volume '${missing.m.volume.slice(0, 64)}' not found`);
    const disks = this.#disks();
    for (const { rec } of resolved) this.#here(rec!);
    const records: VolumeMountRecord[] = resolved.map(({ m, rec }) => ({ sandboxId, volumeId: rec!.id, path: m.path, readOnly: m.read_only === true }));
    await this.#underLocks(
      records.map((r) => r.volumeId),
      async () => {
        // A volume deleted between resolving and now must not be mounted.
        for (const r of records) if (!(await this.#d.store.get(r.volumeId))) throw notFound(`volume '${r.volumeId}' not found`);
        await this.#d.store.addMounts(records, this.#d.clock.now());
      },
    );
    return records.map((r) => ({ source: disks.path(r.volumeId), destination: r.path, volume: { readOnly: r.readOnly } }));
  }

  /** The mounts a fork of snapshot `snapshotId` makes: those its sandbox had when captured (a sandbox's mounts never change). */
  async forkMounts(teamId: string, sandboxId: string, snapshotId: string): Promise<BindMount[]> {
    const source = await this.#d.store.snapshotSandbox(snapshotId);
    if (!source) return [];
    const recorded = await this.#d.store.mountsOf([source]);
    if (recorded.length === 0) return [];
    for (const r of recorded) {
      const rec = await this.#d.store.get(r.volumeId);
      if (!rec || rec.teamId !== teamId) throw conflict(`the snapshot's sandbox mounted volume ${r.volumeId} at ${r.path}, which was deleted; the fork cannot mount it`);
    }
    return this.attach(
      teamId,
      sandboxId,
      recorded.map((r) => ({ volume: r.volumeId, path: r.path, read_only: r.readOnly })),
    );
  }

  /** Undoes `attach` for a create that failed. */
  release(sandboxId: string): Promise<void> {
    return this.#d.store.removeMounts(sandboxId);
  }

  /** Mounts of these sandboxes, for their views. */
  mountsOf(sandboxIds: readonly string[]): Promise<VolumeMountRecord[]> {
    return this.#d.store.mountsOf(sandboxIds);
  }

  /** Removes volume disks this node holds that no row names (a create or delete a crash cut short). */
  async reconcile(): Promise<void> {
    const disks = this.#d.disks;
    if (!disks) return;
    const known = new Set((await this.#d.store.all()).map((v) => v.id));
    for (const id of await disks.list()) if (!known.has(id)) await disks.remove(id);
  }

  async #underLocks<T>(ids: string[], fn: () => Promise<T>): Promise<T> {
    const [first, ...rest] = [...new Set(ids)].sort();
    if (first === undefined) return fn();
    return this.#lock.run(first, () => this.#underLocks(rest, fn));
  }
}
