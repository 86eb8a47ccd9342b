import type { HttpClient, RequestOptions } from './http.ts';
import type { ApiKeyInfo, CreateApiKeyParams, CreatedApiKey } from './types.ts';

/** The team's API keys (creating, listing and revoking need the `keys:manage` permission). */
export class ApiKeys {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /** Creates a key with a subset of the calling key's permissions (all of them by default); `key` is shown only here. */
  create(params: CreateApiKeyParams, opts: RequestOptions = {}): Promise<CreatedApiKey> {
    return this.#http.json({ method: 'POST', path: '/api-keys', body: params, ...opts });
  }

  async list(opts: RequestOptions = {}): Promise<ApiKeyInfo[]> {
    return (await this.#http.json<{ api_keys: ApiKeyInfo[] }>({ method: 'GET', path: '/api-keys', ...opts })).api_keys;
  }

  revoke(keyId: string, opts: RequestOptions = {}): Promise<void> {
    return this.#http.json({ method: 'DELETE', path: `/api-keys/${encodeURIComponent(keyId)}`, ...opts });
  }
}
