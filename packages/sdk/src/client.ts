import { ApiKeys } from './api-keys.ts';
import { AuditLog } from './audit-log.ts';
import { Billing } from './billing.ts';
import { type ClientOptions, HttpClient, type RequestOptions } from './http.ts';
import { Sandboxes } from './sandboxes.ts';
import { Secrets } from './secrets.ts';
import { Snapshots } from './snapshots.ts';
import { SshKeys } from './ssh-keys.ts';
import { Team } from './team.ts';
import { Templates } from './templates.ts';
import type { Info, Me } from './types.ts';
import { Volumes } from './volumes.ts';
import { Webhooks } from './webhooks.ts';

/** One connection to a Sandpit server: configuration, discovery and the resource groups. */
export class SandpitClient {
  /** The transport, for the SDK's own resource classes. */
  readonly http: HttpClient;
  readonly sandboxes: Sandboxes;
  readonly apiKeys: ApiKeys;
  readonly snapshots: Snapshots;
  readonly secrets: Secrets;
  readonly sshKeys: SshKeys;
  readonly templates: Templates;
  readonly team: Team;
  readonly billing: Billing;
  readonly webhooks: Webhooks;
  readonly auditLog: AuditLog;
  readonly volumes: Volumes;
  readonly #dataPlaneUrl: string | undefined;
  #info: Promise<Info> | undefined;
  #teamId: Promise<string> | undefined;

  constructor(opts: ClientOptions = {}) {
    this.http = new HttpClient(opts);
    this.sandboxes = new Sandboxes(this.http);
    this.apiKeys = new ApiKeys(this.http);
    this.snapshots = new Snapshots(this.http);
    this.secrets = new Secrets(this.http);
    this.sshKeys = new SshKeys(this.http);
    this.templates = new Templates(this.http);
    this.team = new Team(this.http, (o) => this.teamId(o));
    this.billing = new Billing(this.http, (o) => this.teamId(o));
    this.webhooks = new Webhooks(this.http);
    this.auditLog = new AuditLog(this.http);
    this.volumes = new Volumes(this.http);
    this.#dataPlaneUrl = opts.dataPlaneUrl?.replace(/\/+$/, '');
  }

  get apiUrl(): string {
    return this.http.apiUrl;
  }

  /** GET /info (no key needed): version, region and where the data plane and sandbox hosts are. Cached once it succeeds. */
  info(opts: RequestOptions = {}): Promise<Info> {
    this.#info ??= this.http.json<Info>({ method: 'GET', path: '/info', apiKey: false, ...opts }).catch((err: unknown) => {
      this.#info = undefined;
      throw err;
    });
    return this.#info;
  }

  /** The team, user and permissions of the API key in use. */
  me(opts: RequestOptions = {}): Promise<Me> {
    return this.http.json({ method: 'GET', path: '/me', ...opts });
  }

  /** The API key's team id (for the /teams/{team_id}/... routes). Cached once it succeeds. */
  teamId(opts: RequestOptions = {}): Promise<string> {
    this.#teamId ??= this.me(opts).then(
      (me) => me.team_id,
      (err: unknown) => {
        this.#teamId = undefined;
        throw err;
      },
    );
    return this.#teamId;
  }

  /** Where data-plane calls go: the configured address, else the one the server announces. */
  async dataPlaneUrl(opts: RequestOptions = {}): Promise<string> {
    return this.#dataPlaneUrl ?? (await this.info(opts)).data_plane_url.replace(/\/+$/, '');
  }
}
