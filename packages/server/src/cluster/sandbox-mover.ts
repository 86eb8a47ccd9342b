import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { ApiError, conflict, notFound, unavailable } from '../errors.ts';
import type { PreparedNetwork } from '../network/hooks.ts';
import type { RuntimeDriver, SandboxManifest, SandboxMoves, TemplateFiles } from '../runtime/driver.ts';
import type { KeyedLock } from '../runtime/host/keyed-lock.ts';
import type { NetworkRules, SandboxStore } from '../store/sandboxes.ts';
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
  peers: NodePeers;
  relocate: (templateId: string | null, t: TemplateFiles) => Promise<TemplateFiles>;
  clock: Clock;
  log: Logger;
}

/** A move (a checkpoint and a layer copied, possibly large, over a slow link) can take this long. */
export const MOVE_TIMEOUT_MS = 10 * 60_000;

/**
 * Moves paused sandboxes between nodes (a drain). The source, holding the sandbox's lock, asks the
 * target to pull the checkpoint image and writable layer; the target checks them against the
 * source's manifest and keeps them paused with a namespace from its own pool; only then does the
 * source switch the sandbox's node in the store (one conditional update) and delete its copy. A
 * failure before the switch leaves the sandbox where it was; resume then happens on the new node.
 */
export class SandboxMover {
  readonly #d: SandboxMoverDeps;

  constructor(deps: SandboxMoverDeps) {
    this.#d = deps;
  }

  #moves(): SandboxMoves {
    const m = this.#d.driver.moves;
    if (!m) throw unavailable(`the ${this.#d.driver.name} driver cannot move sandboxes between nodes (a paused sandbox's memory is not on disk)`);
    return m;
  }

  /** On the source: moves paused sandbox `id` to node `to`. */
  async moveOut(id: string, to: string): Promise<void> {
    const d = this.#d;
    this.#moves();
    await d.lock.run(id, async () => {
      const rec = await d.store.get(id);
      if (!rec || rec.nodeId !== d.nodeId) throw notFound('no such sandbox on this node');
      if (rec.status !== 'paused') throw conflict(`the sandbox is ${rec.status}; only a paused sandbox is moved`);
      const target = await d.peers.live(to, 'the move target');
      const started = d.clock.now();
      await d.peers.call(target, `/internal/sandboxes/${id}/move-in`, { method: 'POST', body: { from: d.nodeId }, timeoutMs: MOVE_TIMEOUT_MS });
      if (!(await d.store.moveNode(id, d.nodeId, to, d.clock.now()))) {
        await d.peers
          .call(target, `/internal/sandboxes/${id}/discard`, { method: 'POST' })
          .catch((err: Error) => d.log.error({ sandbox: id, err: err.message }, 'move: the target kept a copy it should drop'));
        throw conflict('the sandbox changed while it was copied; it stays here');
      }
      // It lives on `to` now: this node's copy and namespace go (its secret bindings stay, for the target).
      await d.driver.destroy(id).catch((err: Error) => d.log.error({ sandbox: id, err: err.message }, 'move: removing the source copy failed; reconcile removes it'));
      await d.network?.release(id, true).catch((err: Error) => d.log.error({ sandbox: id, err: err.message }, 'move: releasing the source namespace failed'));
      d.log.info({ sandbox: id, to, ms: d.clock.now() - started }, 'paused sandbox moved to another node');
    });
  }

  /** On the target: pulls paused sandbox `id` from node `from` and keeps it paused here (not yet its node in the store). */
  async moveIn(id: string, from: string): Promise<void> {
    const d = this.#d;
    const moves = this.#moves();
    const rec = await d.store.get(id);
    if (!rec || rec.nodeId !== from || rec.status !== 'paused') throw conflict(`sandbox ${id} is not paused on node '${from}'`);
    const source = await d.peers.live(from, 'the move source');
    // A copy left by an earlier attempt that was never switched over (the source failed in between) goes first.
    if ((await d.driver.state(id)) !== 'missing') await this.discard(id);
    const path = `/internal/sandboxes/${id}/move`;
    let net: PreparedNetwork | undefined;
    try {
      const manifest = await d.peers.json<SandboxManifest>(source, `${path}/manifest`, { timeoutMs: MOVE_TIMEOUT_MS });
      const template = await d.relocate(rec.templateId, manifest.template);
      net = await d.network?.prepare({ teamId: rec.teamId, sandboxId: id, templateRoot: template.root, network: rec.network, secrets: {}, moved: true });
      await net?.ready;
      await moves.receive({ id, template, netnsPath: net?.netnsPath, netConfig: net?.netConfig, mounts: net?.mounts }, manifest, (part) => d.peers.stream(source, `${path}/parts/${part}`));
    } catch (err) {
      if (net) await d.network?.release(id, true).catch(() => undefined);
      if (err instanceof ApiError) throw err;
      throw unavailable(`copying sandbox ${id} from node '${from}' failed: ${(err as Error).message}`);
    }
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
