import { ApiError, badRequest, conflict, notFound } from '../../errors.ts';
import type { CodeContext, CodeEvent, CreateCodeContextBody, RunCodeBody } from '../../schemas/code.ts';
import type { Principal } from '../access/principal.ts';
import type { PreviewPortService } from '../networking/preview-ports.ts';
import type { SandboxService } from '../sandboxes/sandboxes.ts';

/** Where the code interpreter of platform/code-interpreter listens (E2B's port for it). */
export const CODE_INTERPRETER_PORT = 49999;

type Result = Extract<CodeEvent, { type: 'end' }>['results'][number];
type End = Extract<CodeEvent, { type: 'end' }>;

/**
 * Sandpit's side of the code interpreter: runs code and manages contexts through the service inside the
 * sandbox (templates/code-interpreter/server.py), reached as the preview gateway reaches a port.
 */
export class CodeInterpreterService {
  readonly #sandboxes: SandboxService;
  readonly #previews: PreviewPortService;

  constructor(deps: { sandboxes: SandboxService; previews: PreviewPortService }) {
    this.#sandboxes = deps.sandboxes;
    this.#previews = deps.previews;
  }

  /** Runs code; the events as they come, the last one `end` with everything the run produced. */
  async run(p: Principal, rawId: string, body: RunCodeBody, signal: AbortSignal): Promise<AsyncIterable<CodeEvent>> {
    if (body.context_id && body.language) throw badRequest('give context_id or language, not both');
    const res = await this.#call(p, rawId, 'POST', '/execute', { code: body.code, language: body.language, context_id: body.context_id, env_vars: body.env }, signal);
    return events(res.body!);
  }

  async createContext(p: Principal, rawId: string, body: CreateCodeContextBody): Promise<CodeContext> {
    return (await this.#call(p, rawId, 'POST', '/contexts', { language: body.language ?? 'python', cwd: body.cwd })).json() as Promise<CodeContext>;
  }

  async listContexts(p: Principal, rawId: string): Promise<CodeContext[]> {
    return (await this.#call(p, rawId, 'GET', '/contexts')).json() as Promise<CodeContext[]>;
  }

  async restartContext(p: Principal, rawId: string, contextId: string): Promise<void> {
    await (await this.#call(p, rawId, 'POST', `/contexts/${encodeURIComponent(contextId)}/restart`)).arrayBuffer();
  }

  async removeContext(p: Principal, rawId: string, contextId: string): Promise<void> {
    await (await this.#call(p, rawId, 'DELETE', `/contexts/${encodeURIComponent(contextId)}`)).arrayBuffer();
  }

  async #call(p: Principal, rawId: string, method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const rec = await this.#sandboxes.get(p, rawId);
    const { host, port } = await this.#previews.reach(rec, CODE_INTERPRETER_PORT);
    let res: Response;
    try {
      res = await fetch(`http://${host}:${port}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch {
      throw conflict(`the sandbox serves no code interpreter on port ${CODE_INTERPRETER_PORT}; create it from platform/code-interpreter`);
    }
    if (res.ok) return res;
    // The interpreter's own refusals are plain text meant for the caller.
    const text = (await res.text()).slice(0, 512);
    if (res.status === 404) throw notFound(text || 'no such context');
    if (res.status === 400) throw badRequest(text);
    throw new ApiError(502, 'bad_gateway', `the code interpreter answered ${res.status}: ${text}`);
  }
}

/** The interpreter's NDJSON lines as Sandpit's events, closed by an `end` event. */
async function* events(body: ReadableStream<Uint8Array>): AsyncIterable<CodeEvent> {
  const end: End = { type: 'end', results: [], stdout: [], stderr: [] };
  let finished = false;
  let buf = '';
  const decoder = new TextDecoder();
  const handle = (line: string): CodeEvent | undefined => {
    const msg = JSON.parse(line) as Record<string, unknown> & { type: string };
    switch (msg.type) {
      case 'stdout':
      case 'stderr': {
        const text = String(msg.text);
        end[msg.type].push(text);
        return { type: msg.type, text };
      }
      case 'result': {
        const { type: _t, ...result } = msg;
        end.results.push(result as Result);
        return { ...(result as Result), type: 'result' };
      }
      case 'error': {
        const error = { name: String(msg.name), value: String(msg.value), traceback: String(msg.traceback ?? '') };
        end.error = error;
        return { type: 'error', ...error };
      }
      case 'number_of_executions':
        end.execution_count = Number(msg.execution_count);
        return { type: 'execution_count', execution_count: end.execution_count };
      case 'end_of_execution':
        finished = true;
        return undefined;
      default:
        return undefined;
    }
  };
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      const ev = line ? handle(line) : undefined;
      if (ev) yield ev;
      nl = buf.indexOf('\n');
    }
  }
  if (!finished) {
    end.error = { name: 'UnexpectedEndOfExecution', value: 'the code interpreter closed the run before it finished', traceback: '' };
    yield { type: 'error', ...end.error };
  }
  yield end;
}
