import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { ApiError, conflict, notFound, unavailable } from '../errors.ts';
import type { PreparedNetwork } from '../network/hooks.ts';
import type { RuntimeDriver, SandboxManifest, SandboxMoves, TemplateFiles } from '../runtime/driver.ts';
import type { KeyedLock } from '../runtime/host/keyed-lock.ts';
import type { LiveMoveSteps } from '../services/sandboxes/live-move.ts';
import type { NetworkRules, SandboxRecord, SandboxStore } from '../store/sandboxes.ts';
import type { NodeRecord } from '../store/nodes.ts';
import type { NodePeers } from './node-peer.ts';

/** The network steps of a move: a namespace from this node's pool with the bindings already stored, and its release when the sandbox leaves. */
export interface MoveNetwork {
  prepare(input: { teamId: string; sandboxId: string; templateRoot: string; network: NetworkRules | null; secrets: Record<string, string>; moved: true }): Promise<PreparedNetwork>;
  release(sandboxId: string, moved: boolean): Promise<void>;
}

export interface SandboxMoverDeps {
  nodeId: string;
  store: SandboxStore;
  driver: RuntimeDriver;
  network: MoveNetwork | undefined;
  /** The sandbox service's per-sandbox lock: a move excludes every operation on the sandbox here. */
  lock: KeyedLock;
  /** A running sandbox's checkpoint and resume, as the sandbox service does them. */
  live: LiveMoveSteps;
  peers: NodePeers;
  relocate: (templateId: string | null, t: TemplateFiles) => Promise<TemplateFiles>;
  clock: Clock;
  log: Logger;
}

/** A move (a checkpoint and a layer copied, possibly large, over a slow link) can take this long. */
export const MOVE_TIMEOUT_MS = 10 * 60_000;
/** How long a target keeps a copy the source has not switched over or committed (the source died in between). */
const UNCLAIMED_COPY_MS = 30_000;

/**
 * Moves sandboxes between nodes (a drain, or a migrate). The source, holding the sandbox's lock, asks
 * the target to pull the checkpoint image and writable layer; the target checks them against the
 * source's manifest and keeps them paused with a namespace from its own pool. A paused sandbox is then
 * switched over by the source (one conditional update of its node in the store) and stays paused. A
 * running one is checkpointed first (`migrating`, its connections cut as by a pause); the target
 * switches it over and resumes it, so whichever node the store names after a crash holds its
 * checkpoint. A failure before the switch leaves the sandbox where it was, running again if it ran.
 */
export class SandboxMover {
  readonly #d: SandboxMoverDeps;
  /** The latest copy received of each sandbox, until it is claimed or dropped. */
  readonly #copies = new Map<string, symbol>();
  /** Source copies of sandboxes that moved away, being removed after the move answered. */
  readonly #leaving = new Map<string, Promise<void>>();

  constructor(deps: SandboxMoverDeps) {
    this.#d = deps;
  }

  #moves(): SandboxMoves {
    const m = this.#d.driver.moves;
    if (!m) throw conflict(`the ${this.#d.driver.name} engine cannot move sandboxes between nodes (a sandbox's memory is not kept on disk); it stays here`);
    return m;
  }

  /** On the source: moves sandbox `id` (paused or running) to node `to`. */
  async moveOut(id: string, to: string): Promise<void> {
    const d = this.#d;
    this.#moves();
    const started = d.clock.now();
    let failure: unknown;
    const moved = await d.lock
      .run(id, async () => {
        const rec = await d.store.get(id);
        if (!rec || rec.nodeId !== d.nodeId) throw notFound('no such sandbox on this node');
        if (rec.status !== 'paused' && rec.status !== 'active') throw conflict(`the sandbox is ${rec.status}; only a paused or running sandbox is moved`);
        if (to === d.nodeId) throw conflict(`the sandbox is on node '${to}' already`);
        const target = await d.peers.live(to, 'the move target');
        const running = rec.status === 'active';
        return { running, phases: running ? await this.#moveRunning(rec, target) : await this.#movePaused(rec, target) };
      })
      .catch((err: unknown) => {
        failure = err;
        return undefined;
      });
    // A move that failed after the switch (the target could not resume it) still left this node.
    if (failure !== undefined && (await d.store.get(id))?.nodeId !== to) throw failure;
    // It lives on `to` now. Requests that waited for its lock here are sent on at once; this node's
    // copy and namespace go after the answer (its secret bindings stay, for the target), so a drain
    // goes on to its next sandbox meanwhile. A crash before they are gone leaves them to reconciliation.
    this.#removeSource(id);
    if (failure !== undefined) throw failure;
    d.log.info({ sandbox: id, to, ms: d.clock.now() - started, ...moved }, 'sandbox moved to another node');
  }

  #removeSource(id: string): void {
    const d = this.#d;
    const removal = (async () => {
      await d.driver.destroy(id).catch((err: Error) => d.log.error({ sandbox: id, err: err.message }, 'move: removing the source copy failed; reconcile removes it'));
      await d.network?.release(id, true).catch((err: Error) => d.log.error({ sandbox: id, err: err.message }, 'move: releasing the source namespace failed'));
    })().finally(() => {
      if (this.#leaving.get(id) === removal) this.#leaving.delete(id);
    });
    this.#leaving.set(id, removal);
  }

  /** Resolves once the source copies of every sandbox moved away so far are gone (shutdown, tests). */
  async removalsSettled(): Promise<void> {
    while (this.#leaving.size > 0) await Promise.allSettled([...this.#leaving.values()]);
  }

  async #movePaused(rec: SandboxRecord, target: NodeRecord): Promise<Record<string, number>> {
    const d = this.#d;
    const watch = stopwatch(d.clock);
    await d.peers.call(target, `/internal/sandboxes/${rec.id}/move-in`, { method: 'POST', body: { from: d.nodeId }, timeoutMs: MOVE_TIMEOUT_MS });
    if (!(await d.store.moveNode(rec.id, d.nodeId, target.id, d.clock.now()))) {
      await this.#dropCopy(target, rec.id);
      throw conflict('the sandbox changed while it was copied; it stays here');
    }
    watch.lap('copy');
    return watch.ms;
  }

  async #moveRunning(rec: SandboxRecord, target: NodeRecord): Promise<Record<string, number>> {
    const d = this.#d;
    const watch = stopwatch(d.clock);
    await d.live.checkpoint(rec, target.id);
    watch.lap('checkpoint');
    try {
      await d.peers.call(target, `/internal/sandboxes/${rec.id}/move-in`, { method: 'POST', body: { from: d.nodeId }, timeoutMs: MOVE_TIMEOUT_MS });
    } catch (err) {
      await d.live.resumeHere(rec, target.id, (err as Error).message);
      throw unavailable(`the sandbox could not be copied to node '${target.id}'; it runs on here (${(err as Error).message})`);
    }
    watch.lap('copy');
    try {
      await d.peers.call(target, `/internal/sandboxes/${rec.id}/move-commit`, { method: 'POST', body: { from: d.nodeId }, timeoutMs: MOVE_TIMEOUT_MS });
    } catch (err) {
      // The target may have switched it over and then failed to resume it (it stays paused there), or never got the call: the store says which.
      const message = (err as Error).message;
      if ((await d.store.get(rec.id))?.nodeId === target.id) {
        throw unavailable(`the sandbox moved to node '${target.id}', which did not resume it (${message}); a sandbox a node could not resume is paused there`);
      }
      await this.#dropCopy(target, rec.id);
      await d.live.resumeHere(rec, target.id, message);
      throw unavailable(`node '${target.id}' did not take the sandbox over; it runs on here (${message})`);
    }
    watch.lap('commit');
    return watch.ms;
  }

  async #dropCopy(target: NodeRecord, id: string): Promise<void> {
    await this.#d.peers
      .call(target, `/internal/sandboxes/${id}/discard`, { method: 'POST' })
      .catch((err: Error) => this.#d.log.error({ sandbox: id, err: err.message }, 'move: the target kept a copy it should drop'));
  }

  /** On the target: the source has checkpointed running sandbox `id` and this node holds the copy: it becomes the sandbox's node and resumes it. */
  async commit(id: string, from: string): Promise<void> {
    const d = this.#d;
    await d.lock.run(id, async () => {
      const rec = await d.store.get(id);
      if (!rec || rec.nodeId !== from || rec.status !== 'migrating') throw conflict(`sandbox ${id} is not being moved from node '${from}'`);
      if ((await d.driver.state(id)) !== 'paused') throw conflict(`this node holds no copy of sandbox ${id}`);
      if (!(await d.store.moveNode(id, from, d.nodeId, d.clock.now(), 'migrating'))) throw conflict('the sandbox changed while it was copied; it stays on the source');
      rec.nodeId = d.nodeId;
      await d.live.resumeMoved(rec, from);
    });
  }

  /** On the target: pulls paused sandbox `id` from node `from` and keeps it paused here (not yet its node in the store). */
  async moveIn(id: string, from: string): Promise<void> {
    const d = this.#d;
    const moves = this.#moves();
    const rec = await d.store.get(id);
    if (!rec || rec.nodeId !== from || (rec.status !== 'paused' && rec.status !== 'migrating')) throw conflict(`sandbox ${id} is not paused or being moved on node '${from}'`);
    const source = await d.peers.live(from, 'the move source');
    // A sandbox moving back before this node's old copy of it is gone waits for that removal.
    await this.#leaving.get(id);
    // A copy left by an earlier attempt that was never switched over (the source failed in between) goes first.
    if ((await d.driver.state(id)) !== 'missing') await this.discard(id);
    const path = `/internal/sandboxes/${id}/move`;
    // Any earlier copy's wait ends here: this one is the copy now.
    const copy = Symbol(id);
    this.#copies.set(id, copy);
    let net: PreparedNetwork | undefined;
    const watch = stopwatch(d.clock);
    try {
      const manifest = await d.peers.json<SandboxManifest>(source, `${path}/manifest`, { timeoutMs: MOVE_TIMEOUT_MS });
      watch.lap('manifest');
      const template = await d.relocate(rec.templateId, manifest.template);
      watch.lap('template');
      net = await d.network?.prepare({ teamId: rec.teamId, sandboxId: id, templateRoot: template.root, network: rec.network, secrets: {}, moved: true });
      await net?.ready;
      watch.lap('network');
      await moves.receive({ id, template, netnsPath: net?.netnsPath, netConfig: net?.netConfig, mounts: net?.mounts }, manifest, (part, dest, files) =>
        d.peers.fetchPart(source, `${path}/parts/${part}`, dest, files),
      );
      watch.lap('copy');
      d.log.info({ sandbox: id, from, ms: watch.ms }, 'sandbox copied here');
      // The source switches it over (or commits) next; if it dies first, this copy is nobody's.
      setTimeout(() => void this.#dropIfNotMine(id, copy), UNCLAIMED_COPY_MS).unref();
    } catch (err) {
      if (net) await d.network?.release(id, true).catch(() => undefined);
      if (err instanceof ApiError) throw err;
      throw unavailable(`copying sandbox ${id} from node '${from}' failed: ${(err as Error).message}`);
    }
  }

  /** A copy the store never named this node for (its source died before the switch) goes. */
  async #dropIfNotMine(id: string, copy: symbol): Promise<void> {
    const d = this.#d;
    // A later copy of the same sandbox has its own wait.
    if (this.#copies.get(id) !== copy) return;
    this.#copies.delete(id);
    await d.lock
      .run(id, async () => {
        const rec = await d.store.get(id);
        if (rec?.nodeId === d.nodeId || (await d.driver.state(id)) === 'missing') return;
        d.log.warn({ sandbox: id }, 'move: dropping a copy its source never switched over');
        await this.discard(id);
      })
      .catch((err: Error) => d.log.error({ sandbox: id, err: err.message }, 'move: dropping an unclaimed copy failed'));
  }

  /** On the target: drops a copy the source could not switch to. */
  async discard(id: string): Promise<void> {
    const d = this.#d;
    const rec = await d.store.get(id);
    if (rec?.nodeId === d.nodeId) throw conflict('the sandbox lives on this node; it is not discarded');
    await d.driver.destroy(id);
    await d.network?.release(id, true);
  }
}

/** Where a move's time goes, phase by phase, for the operator's log. */
function stopwatch(clock: Clock): { ms: Record<string, number>; lap: (phase: string) => void } {
  const ms: Record<string, number> = {};
  let mark = clock.now();
  return {
    ms,
    lap: (phase) => {
      const now = clock.now();
      ms[phase] = now - mark;
      mark = now;
    },
  };
}
