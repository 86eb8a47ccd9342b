import type { SandpitClient } from './client.ts';
import { ConnectionError } from './errors.ts';
import type { RequestOptions } from './http.ts';
import type { CodeContext, CodeEvent, CodeResult, CodeRunResult, RunCodeParams } from './types.ts';

export interface RunCodeOptions extends RequestOptions {
  language?: RunCodeParams['language'];
  /** A context from `createContext` (not with `language`); default: the language's default context. */
  contextId?: string;
  /** Environment variables for this run only. */
  env?: Record<string, string>;
  onStdout?: (text: string) => void;
  onStderr?: (text: string) => void;
  /** Each result as it comes: the last expression's value, or a display such as a PNG chart. */
  onResult?: (result: CodeResult) => void;
}

/** Code runs in a sandbox of `platform/code-interpreter` (Python, JavaScript, bash), with kept contexts. */
export class Code {
  readonly #client: SandpitClient;
  readonly #path: string;

  constructor(client: SandpitClient, sandboxId: string) {
    this.#client = client;
    this.#path = `/sandboxes/${encodeURIComponent(sandboxId)}/code`;
  }

  /** Runs code, streaming its output to the callbacks; resolves with everything it produced (`error` set if it raised). */
  async run(code: string, opts: RunCodeOptions = {}): Promise<CodeRunResult> {
    const { language, contextId, env, onStdout, onStderr, onResult, ...request } = opts;
    const body: RunCodeParams = { code, ...(language ? { language } : {}), ...(contextId ? { context_id: contextId } : {}), ...(env ? { env } : {}) };
    const { body: stream } = await this.#client.http.stream({ method: 'POST', path: `${this.#path}/run`, body, ...request });
    for await (const ev of ndjson(stream)) {
      if (ev.type === 'stdout') onStdout?.(ev.text);
      else if (ev.type === 'stderr') onStderr?.(ev.text);
      else if (ev.type === 'result') {
        const { type: _t, ...result } = ev;
        onResult?.(result as CodeResult);
      } else if (ev.type === 'end') return ev;
    }
    throw new ConnectionError('the code run ended without its results');
  }

  createContext(opts: RequestOptions & { language?: RunCodeParams['language']; cwd?: string } = {}): Promise<CodeContext> {
    const { language, cwd, ...request } = opts;
    return this.#client.http.json({ method: 'POST', path: `${this.#path}/contexts`, body: { ...(language ? { language } : {}), ...(cwd ? { cwd } : {}) }, ...request });
  }

  listContexts(opts: RequestOptions = {}): Promise<CodeContext[]> {
    return this.#client.http.json({ method: 'GET', path: `${this.#path}/contexts`, ...opts });
  }

  /** Clears the context's state (a fresh kernel). */
  restartContext(id: string, opts: RequestOptions = {}): Promise<void> {
    return this.#client.http.json({ method: 'POST', path: `${this.#path}/contexts/${encodeURIComponent(id)}/restart`, ...opts });
  }

  removeContext(id: string, opts: RequestOptions = {}): Promise<void> {
    return this.#client.http.json({ method: 'DELETE', path: `${this.#path}/contexts/${encodeURIComponent(id)}`, ...opts });
  }
}

async function* ndjson(body: ReadableStream<Uint8Array>): AsyncGenerator<CodeEvent> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) yield JSON.parse(line) as CodeEvent;
      nl = buf.indexOf('\n');
    }
  }
}
