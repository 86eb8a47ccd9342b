import type { HttpClient, RequestOptions } from './http.ts';
import type { CreateSecretParams, Secret } from './types.ts';

/** The team's secrets: sandboxes bound to one see only a proxy token, swapped for the value at egress. Values are never returned. */
export class Secrets {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /** Stores a secret (ConflictError when the name is taken); `allowed_hosts` limits where the value may be sent. */
  create(params: CreateSecretParams, opts: RequestOptions = {}): Promise<Secret> {
    return this.#http.json({ method: 'POST', path: '/secrets', body: params, ...opts });
  }

  async list(opts: RequestOptions = {}): Promise<Secret[]> {
    return (await this.#http.json<{ secrets: Secret[] }>({ method: 'GET', path: '/secrets', ...opts })).secrets;
  }

  /** Revokes a secret: bound sandboxes keep a useless token, and the name can be reused. */
  revoke(name: string, opts: RequestOptions = {}): Promise<void> {
    return this.#http.json({ method: 'DELETE', path: `/secrets/${encodeURIComponent(name)}`, ...opts });
  }
}
