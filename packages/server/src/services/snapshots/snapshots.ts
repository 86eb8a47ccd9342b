import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { type Clock, iso } from '../../clock.ts';
import { conflict, gone, notFound, tooMany, unavailable } from '../../errors.ts';
import { newId, parseSandboxId, parseUuid } from '../../ids.ts';
import { CaptureEndedSandbox, CaptureRefused, type RuntimeDriver, type SnapshotEngine } from '../../runtime/driver.ts';
import type { CreateSnapshotBody, PatchSnapshotBody, Snapshot } from '../../schemas/snapshot.ts';
import type { SandboxStore } from '../../store/sandboxes.ts';
import type { SnapshotReservationStore } from '../../store/snapshot-reservations.ts';
import type { ResourceEvent } from '../../store/resource-events.ts';
import type { SnapshotRecord, SnapshotStore } from '../../store/snapshots.ts';
import type { TeamStore } from '../../store/teams.ts';
import type { Principal } from '../access/principal.ts';
import type { SandboxService } from '../sandboxes/sandboxes.ts';
import { snapshotEngineOf } from './snapshot-forks.ts';
import { keysetPage } from '../paging.ts';
import { markPaused } from '../sandboxes/sandbox-rules.ts';

export interface SnapshotServiceDeps {
  store: SnapshotStore;
  /** Creations admitted but not yet stored, counted in the store so the caps hold across API replicas. */
  reservations: SnapshotReservationStore;
  sandboxStore: SandboxStore;
  sandboxes: SandboxService;
  teams: TeamStore;
  driver: RuntimeDriver;
  clock: Clock;
  log: Logger;
  maxPerTeam: number;
  maxInFlightPerTeam: number;
  /** Past this, POST answers 202 and the capture settles in the background. */
  deadlineMs: number;
  /** Engine snapshots that are not Snapshot resources (template captures): reconcile leaves their files. */
  heldElsewhere?: () => Promise<Set<string>>;
}

export interface CreateOutcome {
  status: 200 | 201 | 202;
  snapshot: SnapshotRecord;
  retryAfterS?: number;
}

/** Suggested poll interval after a 202. */
const RETRY_AFTER_S = 2;
/** A reservation lasts until its row is stored (after any wait for the sandbox's lock); one of a dead replica lapses after this. */
const RESERVATION_TTL_MS = 15 * 60_000;

/** Snapshots: capture (with idempotency keys, limits, and the 202 path), list, rename, delete. */
export class SnapshotService {
  readonly deps: SnapshotServiceDeps;
  /** Captures whose request was already answered 202: a failure marks the row failed instead of removing it. */
  readonly #answered = new Set<string>();

  constructor(deps: SnapshotServiceDeps) {
    this.deps = deps;
  }

  async create(p: Principal, rawSandboxId: string, body: CreateSnapshotBody): Promise<CreateOutcome> {
    const { sandboxes, store, clock } = this.deps;
    const sb = await sandboxes.get(p, rawSandboxId);
    const key = body.idempotency_key ?? null;
    if (key !== null) {
      const prev = await store.byKey(sb.id, key);
      if (prev) return replay(prev, key);
    }
    const engine = snapshotEngineOf(this.deps.driver);
    const reservation = await this.#reserve(p.teamId);
    let reserved = true;
    const unreserve = async () => {
      if (!reserved) return;
      reserved = false;
      await this.deps.reservations.release(reservation, clock.now());
    };
    let onInserted!: (row: SnapshotRecord) => void;
    const inserted = new Promise<SnapshotRecord>((r) => (onInserted = r));
    let onCaptured!: (outcome: CreateOutcome) => void;
    const captured = new Promise<CreateOutcome>((r) => (onCaptured = r));
    const work = sandboxes.lock
      .run(sb.id, async (): Promise<CreateOutcome> => {
        const cur = await this.deps.sandboxStore.get(sb.id);
        if (!cur) throw notFound(`sandbox '${rawSandboxId}' not found`);
        if (cur.status !== 'active' && cur.status !== 'paused') {
          throw conflict(`the sandbox is ${cur.status}; only an active or paused sandbox can be snapshotted`);
        }
        if (cur.pausedDiskOnly) throw conflict('the sandbox was paused without its memory, so there is no memory to snapshot; resume it first');
        const now = clock.now();
        const row: SnapshotRecord = {
          id: newId(),
          teamId: p.teamId,
          sandboxId: sb.id,
          templateId: cur.templateId,
          kind: 'mem+fs',
          status: 'creating',
          name: body.name ?? null,
          sizeBytes: 0,
          resources: cur.resources,
          env: cur.env,
          idempotencyKey: key,
          createdAt: now,
          readyAt: null,
          updatedAt: now,
          deletedAt: null,
        };
        if (!(await store.insert(row))) {
          // A concurrent request with the same key stored first.
          const prev = await store.byKey(sb.id, key!);
          if (prev) return replay(prev, key!);
          throw conflict('a concurrent request with the same idempotency_key is in progress; retry');
        }
        await unreserve();
        onInserted(row);
        if (cur.status === 'active') sandboxes.closePlatformConnections(cur.id);
        const { ready, settled } = await this.#capture(engine, row, cur.id);
        const outcome: CreateOutcome = { status: 201, snapshot: ready };
        // Answered now; the lock is held until the sandbox runs again, so nothing reaches it half-restored.
        onCaptured(outcome);
        await settled;
        return outcome;
      })
      // A release that fails leaves the reservation to expire.
      .finally(() => unreserve().catch(() => undefined));
    const answer = Promise.race([work, captured]);
    const first = await Promise.race([answer.then((done) => ({ done })), inserted.then((row) => ({ row }))]);
    if ('done' in first) return first.done;
    const settled = await Promise.race([answer.then((done) => ({ done })), sleep(this.deps.deadlineMs).then(() => undefined)]);
    if (settled) return settled.done;
    this.#answered.add(first.row.id);
    work.catch(() => undefined).finally(() => this.#answered.delete(first.row.id));
    return { status: 202, snapshot: first.row, retryAfterS: RETRY_AFTER_S };
  }

  /**
   * Runs the capture and settles the row: ready, removed (refused before an answer), or failed (after a 202).
   * `settled` follows the source sandbox until the engine has continued it (or left it paused).
   */
  async #capture(engine: SnapshotEngine, row: SnapshotRecord, sandboxId: string): Promise<{ ready: SnapshotRecord; settled: Promise<void> }> {
    const { store, sandboxStore, clock, log } = this.deps;
    try {
      const res = await engine.capture(sandboxId, row.id);
      const now = clock.now();
      row.status = 'ready';
      row.sizeBytes = res.sizeBytes;
      row.readyAt = now;
      row.updatedAt = now;
      await store.save(row, snapshotEvent('snapshot.ready', row, now));
      const sb = await sandboxStore.get(sandboxId);
      if (sb) {
        sb.latestSnapshotId = row.id;
        sb.updatedAt = now;
        await sandboxStore.save(sb, { type: 'snapshot', at: now, data: { snapshot_id: row.id } });
      }
      const settled = res.running
        .catch(async () => (await this.deps.driver.state(sandboxId).catch(() => 'missing')) === 'running')
        .then((runs) => (runs ? undefined : this.#restedPaused(sandboxId)))
        .catch((err: unknown) => log.error({ sandbox: sandboxId, err: String(err) }, 'recording the sandbox after its snapshot failed'));
      return { ready: row, settled };
    } catch (err) {
      log.warn({ sandbox: sandboxId, snapshot: row.id, err: String(err) }, 'snapshot capture failed');
      await engine.delete(row.id).catch(() => undefined);
      const lost = err instanceof CaptureRefused ? undefined : await this.#afterFailedCapture(sandboxId, err as Error);
      if (this.#answered.has(row.id)) {
        row.status = 'failed';
        row.updatedAt = clock.now();
        await store.save(row, snapshotEvent('snapshot.failed', row, row.updatedAt));
        throw lost ?? err;
      }
      // Nobody was told about this row: drop it so the same idempotency key can be tried again.
      await store.remove(row.id);
      if (lost) throw lost;
      if (err instanceof CaptureRefused) throw conflict(err.message, err.retryAfterS);
      throw unavailable(
        `the host could not take the snapshot (${String((err as Error).message)
          .split('\n')[0]!
          .slice(0, 300)}); retry`,
      );
    }
  }

  /**
   * A failed save can take a running sandbox down with it (gVisor): it must not stay recorded active.
   * Answers the error to tell when the sandbox was lost. The caller holds the sandbox's lock.
   */
  async #afterFailedCapture(sandboxId: string, err: Error): Promise<Error | undefined> {
    const sb = await this.deps.sandboxStore.get(sandboxId);
    if (sb?.status !== 'active') return undefined;
    // Its process may not have exited yet and would look running.
    if (err instanceof CaptureEndedSandbox) return this.deps.sandboxes.recordLost(sb, 'snapshot', err);
    const state = await this.deps.driver.state(sandboxId).catch(() => 'missing' as const);
    if (state === 'running') return undefined;
    if (state === 'paused') {
      await this.#restedPaused(sandboxId);
      return undefined;
    }
    return this.deps.sandboxes.recordLost(sb, 'snapshot', err);
  }

  /** The engine could not continue a running sandbox after its capture: it is paused on a complete checkpoint. */
  async #restedPaused(sandboxId: string): Promise<void> {
    const { sandboxStore, clock } = this.deps;
    const sb = await sandboxStore.get(sandboxId);
    if (sb?.status !== 'active') return;
    const now = clock.now();
    markPaused(sb, now);
    await sandboxStore.save(sb, { type: 'paused', at: now, data: { during: 'snapshot' } });
  }

  /** Admits one creation under the team's caps across replicas; answers the reservation's id. */
  async #reserve(teamId: string): Promise<string> {
    const team = await this.deps.teams.getTeam(teamId);
    const max = team?.limits.max_snapshots ?? this.deps.maxPerTeam;
    const maxInFlight = team?.limits.max_snapshots_in_flight ?? this.deps.maxInFlightPerTeam;
    const id = newId();
    const res = await this.deps.reservations.reserve(id, teamId, { max, maxInFlight }, this.deps.clock.now(), RESERVATION_TTL_MS);
    if (res.reserved) return id;
    if (res.cap === 'total') throw tooMany('too_many_snapshots', `the team has ${res.total} snapshots, the limit is ${max}; delete one`, RETRY_AFTER_S);
    throw tooMany('too_many_snapshots_in_flight', `the team has ${res.inFlight} snapshots being created, the limit is ${maxInFlight}; retry shortly`, RETRY_AFTER_S);
  }

  async get(p: Principal, rawId: string): Promise<SnapshotRecord> {
    const row = await this.deps.store.get(parseUuid(rawId, 'snapshot id'));
    if (!row || row.teamId !== p.teamId) throw notFound(`snapshot '${rawId}' not found`);
    return row;
  }

  async list(p: Principal, q: { sandbox_id?: string; limit?: string; cursor?: string }): Promise<{ items: SnapshotRecord[]; nextCursor?: string }> {
    const sandboxId = q.sandbox_id === undefined ? undefined : parseSandboxId(q.sandbox_id);
    return keysetPage(q, (after, limit) => this.deps.store.list({ teamId: p.teamId, sandboxId, after, limit }));
  }

  async patch(p: Principal, rawId: string, body: PatchSnapshotBody): Promise<SnapshotRecord> {
    const row = await this.get(p, rawId);
    row.name = body.name;
    row.updatedAt = this.deps.clock.now();
    await this.deps.store.save(row);
    return row;
  }

  async delete(p: Principal, rawId: string): Promise<void> {
    const row = await this.get(p, rawId);
    if (row.status === 'creating') throw conflict('the snapshot is still being created; delete it once it is ready or failed');
    row.status = 'deleting';
    row.updatedAt = this.deps.clock.now();
    await this.deps.store.save(row);
    await this.deps.driver.snapshots?.delete(row.id);
    const now = this.deps.clock.now();
    row.deletedAt = now;
    row.updatedAt = now;
    await this.deps.store.save(row);
  }

  /**
   * After a restart: a capture cut short becomes ready when its files are
   * complete, else failed; a delete cut short is finished; files with no live
   * row (partial captures, deleted rows) are removed.
   */
  async reconcile(): Promise<void> {
    const { store, clock, log } = this.deps;
    const engine = this.deps.driver.snapshots;
    for (const row of await store.unsettled()) {
      const now = clock.now();
      if (row.status === 'creating') {
        const files = await engine?.inspect(row.id);
        if (files) Object.assign(row, { status: 'ready', sizeBytes: files.sizeBytes, readyAt: now });
        else row.status = 'failed';
      } else {
        await engine?.delete(row.id);
        row.deletedAt = now;
      }
      row.updatedAt = now;
      const settled = row.deletedAt === null ? snapshotEvent(row.status === 'ready' ? 'snapshot.ready' : 'snapshot.failed', row, now) : undefined;
      await store.save(row, settled);
      log.warn({ snapshot: row.id, status: row.status }, 'reconciled snapshot');
    }
    if (!engine) return;
    const live = await store.liveIds();
    const held = (await this.deps.heldElsewhere?.()) ?? new Set<string>();
    for (const id of await engine.list()) {
      if (live.has(id) || held.has(id)) continue;
      log.warn({ snapshot: id }, 'removing snapshot files with no live snapshot');
      await engine.delete(id).catch((err) => log.error({ snapshot: id, err: String(err) }, 'snapshot cleanup failed'));
    }
  }
}

function replay(prev: SnapshotRecord, key: string): CreateOutcome {
  if (prev.deletedAt !== null) throw gone(`the snapshot made with idempotency_key '${key.slice(0, 64)}' was deleted`);
  return { status: 200, snapshot: prev };
}

/** The API shape of a snapshot. */
export function snapshotView(s: SnapshotRecord): Snapshot {
  return {
    id: s.id,
    sandbox_id: s.sandboxId,
    template_id: s.templateId,
    kind: s.kind,
    status: s.status,
    name: s.name,
    size_bytes: s.sizeBytes,
    resources: s.resources,
    created_at: iso(s.createdAt),
    ready_at: s.readyAt === null ? null : iso(s.readyAt),
  };
}

/** A snapshot's lifecycle event for webhooks, in order with its sandbox's events. */
function snapshotEvent(type: string, s: SnapshotRecord, at: number): ResourceEvent {
  return { type, at, orderingKey: `sandbox:${s.sandboxId}`, resource: snapshotView(s) };
}
