import { ConnectionError, NotFoundError } from './errors.ts';
import { DEFAULT_IDLE_TIMEOUT_MS } from './exec.ts';
import type { HttpClient, RequestOptions } from './http.ts';
import { readSse } from './sse.ts';
import type { BuildLogEvent, CreateTemplateParams, Template, TemplateBuild, TemplateWithBuild } from './types.ts';

export interface BuildLogOptions extends RequestOptions {
  /** Each log line (step output, and which steps ran or came from the cache). */
  onLine?: (line: string) => void;
  /** The stream fails when nothing, not even a keepalive (every 15 s), arrives for this long (default 45 000). */
  idleTimeoutMs?: number;
}

/** How a build ended. */
export interface BuildResult {
  status: 'ready' | 'failed';
  /** `<code>: <detail>` when it failed. */
  error?: string;
}

const at = (id: string) => `/templates/${encodeURIComponent(id)}`;

/** Templates: curated `platform/*` ones and the team's own, built from a base and steps. */
export class Templates {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /**
   * Starts a build (or a rebuild of a template with the same name) and returns at once with the
   * template and `build_id`; follow it with `logs(template.id, build_id)`.
   */
  create(params: CreateTemplateParams, opts: RequestOptions = {}): Promise<TemplateWithBuild> {
    return this.#http.json({ method: 'POST', path: '/templates', body: params, ...opts });
  }

  async list(opts: RequestOptions = {}): Promise<Template[]> {
    return (await this.#http.json<{ templates: Template[] }>({ method: 'GET', path: '/templates', ...opts })).templates;
  }

  /** By UUID or name (`platform/base` included). */
  get(idOrName: string, opts: RequestOptions = {}): Promise<Template> {
    return this.#http.json({ method: 'GET', path: at(idOrName), ...opts });
  }

  /** Deletes a team template; false when it was already gone. ConflictError while sandboxes use it or it builds. */
  async delete(idOrName: string, opts: RequestOptions = {}): Promise<boolean> {
    try {
      await this.#http.json({ method: 'DELETE', path: at(idOrName), ...opts });
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  /** A build: status, error and which steps ran or came from the cache. */
  build(templateId: string, buildId: string, opts: RequestOptions = {}): Promise<TemplateBuild> {
    return this.#http.json({ method: 'GET', path: `${at(templateId)}/builds/${encodeURIComponent(buildId)}`, ...opts });
  }

  /** Follows a build's log (every line so far, then live lines) until the build ends, and says how it ended. */
  async logs(templateId: string, buildId: string, opts: BuildLogOptions = {}): Promise<BuildResult> {
    const path = `${at(templateId)}/builds/${encodeURIComponent(buildId)}/logs`;
    const opened = await this.#http.stream({ method: 'GET', path, timeoutMs: opts.timeoutMs, signal: opts.signal });
    const what = `GET ${path}`;
    for await (const raw of readSse(opened.body, { idleTimeoutMs: opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, controller: opened.controller, signal: opts.signal, what })) {
      const event = raw as BuildLogEvent;
      if (event.line !== undefined) opts.onLine?.(event.line);
      if (event.finished) return event.error ? { status: event.status ?? 'failed', error: event.error } : { status: event.status ?? 'failed' };
    }
    throw new ConnectionError(`${what}: the stream ended before the build finished`);
  }
}
