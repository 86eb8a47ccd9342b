import { ApiError, apiError, ConfigurationError, ConnectionError, SandpitError, TimeoutError } from './errors.ts';

export interface ClientOptions {
  /** Control-plane address. Default: env SANDPIT_API_URL, else http://localhost:3000. */
  apiUrl?: string;
  /** Team API key, sent as X-API-Key. Default: env SANDPIT_API_KEY. */
  apiKey?: string;
  /** Data-plane address; by default learnt from GET /info. */
  dataPlaneUrl?: string;
  /** Deadline of one call, retries included, in milliseconds (default 60 000). */
  timeoutMs?: number;
  /** How often GET and DELETE are retried after 429, 5xx or a network error (default 3). */
  maxRetries?: number;
  /** First backoff step in milliseconds; it doubles per retry, with jitter (default 250). */
  retryDelayMs?: number;
  /** A fetch implementation; default the global one. */
  fetch?: typeof fetch;
}

/** Options every call accepts. */
export interface RequestOptions {
  /** Overrides the client's deadline for this call. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

type Method = 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';

export interface HttpRequest extends RequestOptions {
  method: Method;
  path: string;
  query?: URLSearchParams;
  body?: unknown;
  /** A body sent as is (application/octet-stream) instead of JSON; a stream is sent as it is read. */
  rawBody?: Blob | ReadableStream<Uint8Array> | Uint8Array | string;
  /** Another base address than the control plane (the data plane). */
  baseUrl?: string;
  /** Data-plane requests authenticate with the access token and must not carry the team key. */
  headers?: Record<string, string>;
  apiKey?: false;
}

export const DEFAULT_API_URL = 'http://localhost:3000';
const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_RETRIES = 3;
const DEFAULT_RETRY_DELAY_MS = 250;
const MAX_BACKOFF_MS = 10_000;

/** Environment variables where a process has them (Node); absent in browsers. */
export function envVar(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.[name] || undefined;
}

/** GET and DELETE are safe to repeat; POST, PATCH (and PUT, whose streamed body cannot be replayed) might run twice, so they are never retried. */
const idempotent = (method: Method) => method === 'GET' || method === 'DELETE';

/** A full disk (507) stays full: repeating the call only delays the same answer. */
const retryable = (err: SandpitError) => err instanceof ConnectionError || (err instanceof ApiError && (err.status === 429 || (err.status >= 500 && err.status !== 507)));

/** Retry-After is either delta-seconds or an HTTP date. */
function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The SDK's error for a non-2xx answer, from the `{ error: { code, message } }` envelope when there is one. */
async function errorFrom(res: Response): Promise<ApiError> {
  const text = await res.text();
  let code: string | undefined;
  let message = text.trim().slice(0, 500) || `HTTP ${res.status} ${res.statusText}`;
  try {
    const envelope = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof envelope.error?.code === 'string') code = envelope.error.code;
    if (typeof envelope.error?.message === 'string') message = envelope.error.message;
  } catch {
    // Not the envelope: keep the raw text as the message.
  }
  return apiError(res.status, code, message, parseRetryAfter(res.headers.get('retry-after')));
}

/** fetch reports network failures as a bare "fetch failed"; the cause says what went wrong. */
function connectionError(req: HttpRequest, err: unknown): ConnectionError {
  const cause = (err as { cause?: { message?: string; code?: string } }).cause;
  const detail = cause?.message || cause?.code;
  return new ConnectionError(`${req.method} ${req.path}: ${(err as Error).message}${detail ? ` (${detail})` : ''}`, { cause: err });
}

/** fetch with the contract's client rules: typed errors, retries for GET and DELETE only, and a deadline on every call. */
export class HttpClient {
  readonly apiUrl: string;
  readonly apiKey: string | undefined;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly retryDelayMs: number;
  readonly #fetch: typeof fetch;

  constructor(opts: ClientOptions = {}) {
    this.apiUrl = (opts.apiUrl ?? envVar('SANDPIT_API_URL') ?? DEFAULT_API_URL).replace(/\/+$/, '');
    this.apiKey = opts.apiKey ?? envVar('SANDPIT_API_KEY');
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.retryDelayMs = opts.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    // Bound to globalThis: browsers reject a fetch called as a method of another object.
    this.#fetch = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** Sends a request and returns its parsed JSON body (undefined for an empty one). */
  async json<T>(req: HttpRequest): Promise<T> {
    const timeoutMs = req.timeoutMs ?? this.timeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = req.signal ? AbortSignal.any([deadline, req.signal]) : deadline;
    return this.#retrying(req, signal, deadline, timeoutMs, async (res) => {
      const text = await res.text();
      return (text === '' ? undefined : JSON.parse(text)) as T;
    });
  }

  /**
   * Opens a streaming response. `timeoutMs` bounds the wait for the response headers (GET retries
   * included; POST streams are never retried); after that the caller owns the body and its read
   * deadline, and aborting `controller` closes the connection.
   */
  async stream(req: HttpRequest): Promise<{ body: ReadableStream<Uint8Array>; controller: AbortController; headers: Headers }> {
    const timeoutMs = req.timeoutMs ?? this.timeoutMs;
    const controller = new AbortController();
    const signal = req.signal ? AbortSignal.any([controller.signal, req.signal]) : controller.signal;
    const timer = setTimeout(() => controller.abort(new TimeoutError(`no answer within ${timeoutMs} ms`)), timeoutMs);
    try {
      return await this.#retrying(req, signal, controller.signal, timeoutMs, async (res) => {
        if (!res.body) throw new ConnectionError(`${req.method} ${req.path} answered without a body`);
        return { body: res.body, controller, headers: res.headers };
      });
    } catch (err) {
      controller.abort();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Sends until `take` has a successful response's result: GET and DELETE are retried with backoff
   * (Retry-After first) while the failure is retryable and the deadline `timeoutMs` allows;
   * `deadline` is what expires at that deadline, for telling a timeout from other aborts.
   */
  async #retrying<T>(req: HttpRequest, signal: AbortSignal, deadline: AbortSignal, timeoutMs: number, take: (res: Response) => Promise<T>): Promise<T> {
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      let failure: SandpitError;
      try {
        const res = await this.#send(req, signal);
        if (!res.ok) throw await errorFrom(res);
        return await take(res);
      } catch (err) {
        failure = this.#classify(err, req, deadline, timeoutMs);
      }
      if (!idempotent(req.method) || attempt >= this.maxRetries || !retryable(failure)) throw failure;
      const delay = (failure instanceof ApiError ? failure.retryAfterMs : undefined) ?? this.#backoff(attempt);
      // A wait that would outlast the deadline only delays the same failure.
      if (Date.now() - started + delay >= timeoutMs) throw failure;
      try {
        await sleep(delay, signal);
      } catch (err) {
        throw this.#classify(err, req, deadline, timeoutMs);
      }
    }
  }

  #send(req: HttpRequest, signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
    if (req.apiKey !== false) {
      if (!this.apiKey) throw new ConfigurationError('no API key: pass apiKey or set SANDPIT_API_KEY');
      headers['x-api-key'] = this.apiKey;
    }
    let body: BodyInit | undefined;
    if (req.rawBody !== undefined) {
      headers['content-type'] = 'application/octet-stream';
      body = req.rawBody as BodyInit;
    } else if (req.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.body);
    }
    const query = req.query?.toString();
    const url = `${req.baseUrl ?? this.apiUrl}${req.path}${query ? `?${query}` : ''}`;
    // A stream body needs half-duplex in Node's fetch (and in browsers that can stream uploads at all).
    const duplex = req.rawBody instanceof ReadableStream ? { duplex: 'half' as const } : {};
    return this.#fetch(url, { method: req.method, headers, body, signal, ...duplex });
  }

  /** Turns whatever a failed attempt threw into the SDK error to report or retry; the caller's own abort is rethrown at once. */
  #classify(err: unknown, req: HttpRequest, deadline: AbortSignal, timeoutMs: number): SandpitError {
    if (err instanceof SandpitError) return err;
    if (req.signal?.aborted) throw req.signal.reason;
    if (deadline.aborted) return new TimeoutError(`${req.method} ${req.path}: no complete answer within ${timeoutMs} ms`);
    return connectionError(req, err);
  }

  /** Exponential backoff with "equal jitter": half the step fixed, half random, so retries spread out but never hammer. */
  #backoff(attempt: number): number {
    const step = Math.min(MAX_BACKOFF_MS, this.retryDelayMs * 2 ** attempt);
    return step / 2 + Math.random() * (step / 2);
  }
}
