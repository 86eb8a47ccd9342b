import { SandpitClient } from './client.ts';
import { Code } from './code.ts';
import { Commands } from './commands.ts';
import { DataPlane } from './data-plane.ts';
import { Desktop } from './desktop.ts';
import type { CommandOptions, ExecResult, StreamOptions, StreamResult } from './exec.ts';
import { Files } from './files.ts';
import type { ClientOptions, RequestOptions } from './http.ts';
import { PreviewPorts } from './preview-ports.ts';
import { Processes } from './processes.ts';
import type { LifecycleOptions, ListSandboxesFilters } from './sandboxes.ts';
import type { CreateSnapshotOptions } from './snapshots.ts';
import { Terminals } from './terminals.ts';
import type { CreateSandboxParams, SandboxEvent, SandboxInfo, SandboxMetrics, SandboxWithToken, Snapshot, UpdateSandboxParams } from './types.ts';

/** How the static helpers reach the server: an existing client, or options for a new one. */
export interface ConnectionOptions extends ClientOptions {
  client?: SandpitClient;
  signal?: AbortSignal;
}

export type CreateSandboxOptions = CreateSandboxParams & ConnectionOptions;
export type ListSandboxesOptions = ListSandboxesFilters & ConnectionOptions;

/** Separates connection options from the request fields they were given with. */
function connection<T extends ConnectionOptions>(opts: T) {
  const { client, apiUrl, apiKey, dataPlaneUrl, timeoutMs, maxRetries, retryDelayMs, fetch, signal, ...rest } = opts;
  return {
    client: client ?? new SandpitClient({ apiUrl, apiKey, dataPlaneUrl, timeoutMs, maxRetries, retryDelayMs, fetch }),
    request: { timeoutMs, signal } satisfies RequestOptions,
    rest,
  };
}

/**
 * A live sandbox: made by `create`, `connect` or `resume`, it holds the access token that
 * `commands` uses on the data plane. Plain records (`get`, `list`) are `SandboxInfo`.
 */
export class Sandbox {
  readonly id: string;
  readonly client: SandpitClient;
  /** Runs commands over the data plane with the access token. */
  readonly commands: Commands;
  /** The sandbox's filesystem (data plane). */
  readonly files: Files;
  /** Interactive PTY sessions over WebSocket (data plane). */
  readonly terminals: Terminals;
  /** Background processes (data plane). */
  readonly processes: Processes;
  /** Published ports (control plane). */
  readonly previewPorts: PreviewPorts;
  /** The desktop of a platform/desktop sandbox (control plane). */
  readonly desktop: Desktop;
  /** Code runs (Python, JavaScript, bash) in a sandbox of platform/code-interpreter (control plane). */
  readonly code: Code;
  #info: SandboxInfo;
  #accessToken: string;

  private constructor(client: SandpitClient, info: SandboxWithToken) {
    const { access_token, ...rest } = info;
    this.client = client;
    this.id = info.id;
    this.#info = rest;
    this.#accessToken = access_token;
    const plane = new DataPlane(client, this.id, () => this.#accessToken);
    this.commands = new Commands(plane);
    this.files = new Files(plane);
    this.terminals = new Terminals(plane);
    this.processes = new Processes(plane);
    this.previewPorts = new PreviewPorts(client, this.id);
    this.desktop = new Desktop(client, this.id);
    this.code = new Code(client, this.id);
  }

  /**
   * Creates a sandbox (from `platform/base` unless `from_template` says otherwise, or as a fork of a
   * snapshot with `from_snapshot`), ready to use on return.
   */
  static async create(opts: CreateSandboxOptions = {}): Promise<Sandbox> {
    const { client, request, rest } = connection(opts);
    return new Sandbox(client, await client.sandboxes.create(rest, request));
  }

  /** Attaches to an existing sandbox, resuming it when paused. */
  static async connect(id: string, opts: ConnectionOptions = {}): Promise<Sandbox> {
    const { client, request } = connection(opts);
    return new Sandbox(client, await client.sandboxes.activate(id, request));
  }

  static get(id: string, opts: ConnectionOptions = {}): Promise<SandboxInfo> {
    const { client, request } = connection(opts);
    return client.sandboxes.get(id, request);
  }

  /** The team's sandboxes, newest first, a page at a time: `for await (const page of Sandbox.list()) ...`. */
  static list(opts: ListSandboxesOptions = {}): AsyncGenerator<SandboxInfo[]> {
    const { client, request, rest } = connection(opts);
    return client.sandboxes.list(rest, request);
  }

  /** Deletes a sandbox by id; false when it was already gone. */
  static kill(id: string, opts: ConnectionOptions = {}): Promise<boolean> {
    const { client, request } = connection(opts);
    return client.sandboxes.kill(id, request);
  }

  /** The sandbox as last seen by this object. */
  get info(): SandboxInfo {
    return this.#info;
  }

  /** Token for the data plane (X-Access-Token); it grants access to this sandbox only. */
  get accessToken(): string {
    return this.#accessToken;
  }

  /** Fetches the current state. */
  async getInfo(opts: RequestOptions = {}): Promise<SandboxInfo> {
    this.#info = await this.client.sandboxes.get(this.id, opts);
    return this.#info;
  }

  async update(params: UpdateSandboxParams, opts: RequestOptions = {}): Promise<SandboxInfo> {
    this.#info = await this.client.sandboxes.update(this.id, params, opts);
    return this.#info;
  }

  /** `keepMemory: false` keeps only the disk: every process ends, and resume boots the sandbox afresh. */
  async pause(opts: LifecycleOptions = {}): Promise<SandboxInfo> {
    this.#info = await this.client.sandboxes.pause(this.id, opts);
    return this.#info;
  }

  /** `keepMemory: false` boots the sandbox from its disk instead of restoring its processes. */
  async resume(opts: LifecycleOptions = {}): Promise<SandboxInfo> {
    const { access_token, ...info } = await this.client.sandboxes.resume(this.id, opts);
    this.#info = info;
    this.#accessToken = access_token;
    return info;
  }

  /** Moves it to another node, processes and all (see Sandboxes.migrate). */
  async migrate(params: { node?: string } = {}, opts: RequestOptions = {}): Promise<SandboxInfo> {
    this.#info = await this.client.sandboxes.migrate(this.id, params, opts);
    return this.#info;
  }

  /** Sampled CPU, memory, disk and network use (see Sandboxes.metrics). */
  metrics(params: { since?: Date | string } = {}, opts: RequestOptions = {}): Promise<SandboxMetrics> {
    return this.client.sandboxes.metrics(this.id, params, opts);
  }

  /** Lifecycle events with reasons, oldest first. */
  events(params: { after?: number; limit?: number } = {}, opts: RequestOptions = {}): Promise<SandboxEvent[]> {
    return this.client.sandboxes.events(this.id, params, opts);
  }

  /** Deletes the sandbox; false when it was already gone. */
  kill(opts: RequestOptions = {}): Promise<boolean> {
    return this.client.sandboxes.kill(this.id, opts);
  }

  /** Captures memory and disk (see `client.snapshots.create`); the snapshot is ready (or failed) on return. */
  snapshot(opts: CreateSnapshotOptions = {}): Promise<Snapshot> {
    return this.client.snapshots.create(this.id, opts);
  }

  /** Where a port is (or would be, once published) reachable, from the server's announced preview URL pattern. */
  async previewUrl(port: number, opts: RequestOptions = {}): Promise<string> {
    const pattern = (await this.client.info(opts)).preview_url;
    return pattern.replaceAll('{port}', String(port)).replaceAll('{sandbox_id}', this.id);
  }

  /** Runs a command to completion over the control plane (API key; auto-resumes a paused sandbox). */
  exec(command: string, opts: CommandOptions = {}): Promise<ExecResult> {
    return this.client.sandboxes.exec(this.id, command, opts);
  }

  /** Runs a command over the control plane, streaming its output to the callbacks. */
  execStream(command: string, opts: StreamOptions = {}): Promise<StreamResult> {
    return this.client.sandboxes.execStream(this.id, command, opts);
  }
}
