import type { HttpClient, RequestOptions } from './http.ts';
import type { AddSshKeyParams, SshKey } from './types.ts';

/** The team's SSH public keys: each logs in to any of the team's sandboxes through the SSH gateway (`ssh -p <ssh_port> <sandbox-id>@host`). */
export class SshKeys {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /** Registers an OpenSSH public key line (ConflictError when the team has it already). */
  add(params: AddSshKeyParams, opts: RequestOptions = {}): Promise<SshKey> {
    return this.#http.json({ method: 'POST', path: '/ssh-keys', body: params, ...opts });
  }

  async list(opts: RequestOptions = {}): Promise<SshKey[]> {
    return (await this.#http.json<{ ssh_keys: SshKey[] }>({ method: 'GET', path: '/ssh-keys', ...opts })).ssh_keys;
  }

  /** Removes a key: it logs in nowhere from then on. */
  delete(id: string, opts: RequestOptions = {}): Promise<void> {
    return this.#http.json({ method: 'DELETE', path: `/ssh-keys/${encodeURIComponent(id)}`, ...opts });
  }
}
