import { conflict } from '../../errors.ts';
import type { SandboxRecord, SandboxStore } from '../../store/sandboxes.ts';
import type { Principal } from '../access/principal.ts';
import type { SandboxService } from './sandboxes.ts';

/** Moves one sandbox off its node (an API replica's SandboxRelocation); answers the node it is on now. */
export interface Relocator {
  move(rec: SandboxRecord, to?: string): Promise<string>;
}

/**
 * `POST /sandboxes/{id}/migrate`: a running gVisor sandbox moves with its memory (`migrating` while
 * it does), a paused one as a drain moves it. Only an installation of several nodes has somewhere to
 * move it to.
 */
export class SandboxMigrations {
  readonly #sandboxes: SandboxService;
  readonly #store: SandboxStore;
  readonly #relocator: Relocator | undefined;

  constructor(deps: { sandboxes: SandboxService; store: SandboxStore; relocator?: Relocator }) {
    this.#sandboxes = deps.sandboxes;
    this.#store = deps.store;
    this.#relocator = deps.relocator;
  }

  async migrate(p: Principal, rawId: string, node?: string): Promise<SandboxRecord> {
    const rec = await this.#sandboxes.get(p, rawId);
    if (!this.#relocator) throw conflict('this installation runs on one host: there is no other node to move the sandbox to');
    await this.#relocator.move(rec, node);
    return (await this.#store.get(rec.id)) ?? rec;
  }
}
