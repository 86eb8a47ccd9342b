import type { SandpitClient } from './client.ts';
import type { RequestOptions } from './http.ts';
import type { PreviewPort } from './types.ts';

/** A sandbox's published ports (control plane, API key). */
export class PreviewPorts {
  readonly #client: SandpitClient;
  readonly #path: string;

  constructor(client: SandpitClient, sandboxId: string) {
    this.#client = client;
    this.#path = `/sandboxes/${encodeURIComponent(sandboxId)}/preview-ports`;
  }

  /**
   * Publishes a port at its preview URL (the server inside must listen on 0.0.0.0). `access` defaults
   * to the sandbox's preview_access; a private port's answer carries the `preview_token` to send.
   */
  publish(port: number, opts: RequestOptions & { access?: 'public' | 'private' } = {}): Promise<PreviewPort> {
    const { access, ...request } = opts;
    return this.#client.http.json({ method: 'POST', path: this.#path, body: access ? { port, access } : { port }, ...request });
  }

  async list(opts: RequestOptions = {}): Promise<PreviewPort[]> {
    return (await this.#client.http.json<{ preview_ports: PreviewPort[] }>({ method: 'GET', path: this.#path, ...opts })).preview_ports;
  }

  unpublish(port: number, opts: RequestOptions = {}): Promise<void> {
    return this.#client.http.json({ method: 'DELETE', path: `${this.#path}/${port}`, ...opts });
  }
}
