import { timingSafeEqual } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { parseSandboxIdLoose } from '../../ids.ts';
import type { AgentProcess, SpawnOptions } from '../../runtime/agent-client.ts';
import type { SandboxRecord, SandboxStore } from '../../store/sandboxes.ts';
import type { SandboxService } from '../sandboxes/sandboxes.ts';
import type { LoginThrottle } from './login-throttle.ts';
import type { SshKeyService } from './ssh-keys.ts';

/** What an SSH client offered: the sandbox's access token as a password, or a public key (already verified, or only asked about). */
export type SshCredential = { kind: 'password'; password: string } | { kind: 'key'; blob: Buffer };

/** How long a tunnel waits for the sandbox's port to accept. */
const TUNNEL_CONNECT_MS = 5000;

/**
 * Who may log in to which sandbox over SSH, and what a login may reach: processes through the
 * sandbox's agent and TCP ports on its address. Every refusal looks the same to the client.
 */
export class SshAccess {
  readonly #store: SandboxStore;
  readonly #sandboxes: SandboxService;
  readonly #keys: SshKeyService;
  readonly #throttle: LoginThrottle;
  readonly #addressOf: (sandboxId: string) => string | undefined;
  readonly #tunnels = new Map<string, Set<Socket>>();

  constructor(deps: { store: SandboxStore; sandboxes: SandboxService; keys: SshKeyService; throttle: LoginThrottle; addressOf: (sandboxId: string) => string | undefined }) {
    this.#store = deps.store;
    this.#sandboxes = deps.sandboxes;
    this.#keys = deps.keys;
    this.#throttle = deps.throttle;
    this.#addressOf = deps.addressOf;
  }

  /** The sandbox the user name names when the credential opens it; undefined for any refusal (throttled, no such sandbox, wrong credential). */
  async authenticate(username: string, cred: SshCredential, address: string): Promise<SandboxRecord | undefined> {
    if (this.#throttle.blocked(address)) return undefined;
    const rec = await this.#check(username, cred).catch(() => undefined);
    if (!rec) this.#throttle.failed(address);
    return rec;
  }

  async #check(username: string, cred: SshCredential): Promise<SandboxRecord | undefined> {
    const id = parseSandboxIdLoose(username)?.id;
    if (!id) return undefined;
    const rec = await this.#store.get(id);
    if (!rec) return undefined;
    if (cred.kind === 'password') {
      const a = Buffer.from(rec.accessToken);
      const b = Buffer.from(cred.password);
      return a.length === b.length && timingSafeEqual(a, b) ? rec : undefined;
    }
    return (await this.#keys.find(rec.teamId, cred.blob)) ? rec : undefined;
  }

  /** Resumes a paused sandbox (a login does, as a preview request does). */
  async activate(rec: SandboxRecord): Promise<SandboxRecord> {
    return this.#sandboxes.ensureActive(rec);
  }

  /** Starts a process in the sandbox; it is killed when the agent connection closes, like a process of an ended SSH session. */
  async spawn(rec: SandboxRecord, opts: SpawnOptions): Promise<AgentProcess> {
    const { client } = await this.#sandboxes.withAgent(rec);
    return client.spawn(opts);
  }

  /** A TCP connection to a port of the sandbox (ssh -L); closed from the host side before a capture (see closeTunnels). */
  async tunnel(rec: SandboxRecord, port: number): Promise<Socket> {
    const live = await this.#sandboxes.ensureActive(rec);
    const host = this.#addressOf(live.id);
    if (!host) throw new Error('the sandbox has no network');
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect({ host, port, timeout: TUNNEL_CONNECT_MS });
      s.once('connect', () => {
        s.setTimeout(0);
        resolve(s);
      });
      s.once('error', reject);
      s.once('timeout', () => {
        s.destroy();
        reject(new Error('connect timed out'));
      });
    });
    let set = this.#tunnels.get(live.id);
    if (!set) this.#tunnels.set(live.id, (set = new Set()));
    set.add(socket);
    socket.once('close', () => {
      set.delete(socket);
      if (set.size === 0 && this.#tunnels.get(live.id) === set) this.#tunnels.delete(live.id);
    });
    return socket;
  }

  /** Closes the sandbox's tunnels; answers how many (a PlatformConnections closer). */
  closeTunnels(sandboxId: string): number {
    const set = this.#tunnels.get(sandboxId);
    if (!set) return 0;
    this.#tunnels.delete(sandboxId);
    for (const s of set) s.destroy();
    return set.size;
  }
}
/** Where relative paths of an SSH session point (the sandbox user's home). */
export { SANDBOX_HOME as SSH_HOME } from '../../templates/sandbox-user.ts';
