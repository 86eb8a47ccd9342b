/**
 * The console's only way to the server: the public API, signed in with the HttpOnly session cookie
 * (never the API key). Mutations carry the header the server requires of cookie sessions.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const CSRF = { 'x-sandpit-console': '1' };

/** Called when the session has ended (401) so the app can show the sign-in page. */
let onSignedOut: () => void = () => undefined;
export const setSignedOutHandler = (fn: () => void) => (onSignedOut = fn);

/** Throws the server's error envelope as an ApiError. */
export async function fail(res: Response): Promise<never> {
  let code = 'error';
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
  } catch {
    // not JSON: keep the status line
  }
  throw new ApiError(res.status, code, message);
}

/** Sends a request with the session (and CSRF header when it changes something); a failure is thrown as the server's error. */
async function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const h: Record<string, string> = { ...headers };
  if (method !== 'GET') Object.assign(h, CSRF);
  if (body !== undefined) h['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  if (res.status === 401 && !path.startsWith('/session') && !h['x-access-token']) onSignedOut();
  if (!res.ok) await fail(res);
  return res;
}

export async function call<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await send(method, path, body, headers);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const get = <T = unknown>(path: string) => call<T>('GET', path);
/** A text answer (a diff), with the same session and errors as `call`. */
export const getText = async (path: string) => (await send('GET', path)).text();
export const post = <T = unknown>(path: string, body?: unknown) => call<T>('POST', path, body);
export const patch = <T = unknown>(path: string, body?: unknown) => call<T>('PATCH', path, body);
export const del = <T = unknown>(path: string) => call<T>('DELETE', path);

export interface Me {
  team_id: string;
  user_id: string;
  key_id: string;
  permissions: string[];
}

export const signIn = (apiKey: string) => post<Me & { expires_at: string }>('/session', { api_key: apiKey });
export const signOut = () => del('/session');

/** Data-plane access to one sandbox: its access token, kept in memory only, from activate. */
const tokens = new Map<string, string>();

export async function dataPlane(sandboxId: string, renew = false): Promise<Record<string, string>> {
  let token = renew ? undefined : tokens.get(sandboxId);
  if (!token) {
    token = (await post<{ access_token: string }>(`/sandboxes/${sandboxId}/activate`)).access_token;
    tokens.set(sandboxId, token);
  }
  return { 'x-platform-sandbox-id': sandboxId, 'x-access-token': token };
}

export const rememberToken = (sandboxId: string, token: string) => tokens.set(sandboxId, token);
export const tokenOf = (sandboxId: string) => tokens.get(sandboxId);

/** A data-plane request, renewing the token once if it was refused. */
export async function dp(sandboxId: string, method: string, path: string, body?: unknown): Promise<Response> {
  for (const renew of [false, true]) {
    const headers = await dataPlane(sandboxId, renew);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.status === 401 && !renew) continue;
    if (!res.ok) await fail(res);
    return res;
  }
  throw new ApiError(401, 'unauthorized', 'the sandbox refused its access token');
}

/** Reads a text/event-stream body, calling `onEvent` with each data event's JSON. */
export async function readSse<T>(res: Response, onEvent: (data: T) => void): Promise<void> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let nl: number;
    while ((nl = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, nl);
      buf = buf.slice(nl + 2);
      for (const line of block.split('\n')) if (line.startsWith('data: ')) onEvent(JSON.parse(line.slice(6)) as T);
    }
  }
}

/** A size in B, KiB or MiB. */
export const fmtSize = (n: number) => (n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`);
export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '-');
