import type { SandpitClient } from './client.ts';
import type { HttpRequest, RequestOptions } from './http.ts';

/** A data-plane request: the sandbox routing and the access token are added by `DataPlane`. */
export type DataPlaneRequest = Omit<HttpRequest, 'baseUrl' | 'headers' | 'apiKey'>;

/** Where one sandbox's data-plane calls go, authenticated by its access token (never the team key). */
export class DataPlane {
  readonly client: SandpitClient;
  readonly sandboxId: string;
  readonly #accessToken: () => string;

  constructor(client: SandpitClient, sandboxId: string, accessToken: () => string) {
    this.client = client;
    this.sandboxId = sandboxId;
    this.#accessToken = accessToken;
  }

  get accessToken(): string {
    return this.#accessToken();
  }

  /** Routed by header to the announced data-plane address, so no per-sandbox DNS name is needed. */
  async target(opts: RequestOptions = {}): Promise<{ baseUrl: string; headers: Record<string, string>; apiKey: false }> {
    return {
      baseUrl: await this.client.dataPlaneUrl({ signal: opts.signal }),
      headers: { 'x-platform-sandbox-id': this.sandboxId, 'x-access-token': this.#accessToken() },
      apiKey: false,
    };
  }

  async json<T>(req: DataPlaneRequest): Promise<T> {
    return this.client.http.json<T>({ ...req, ...(await this.target(req)) });
  }

  async stream(req: DataPlaneRequest) {
    return this.client.http.stream({ ...req, ...(await this.target(req)) });
  }
}
