import type { ErrorCode } from './error-codes.ts';

/** The one error type the API raises: an HTTP status plus the contract's stable code (from `error-codes.ts`). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly headers: Record<string, string>;

  constructor(status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

export const badRequest = (message: string) => new ApiError(400, 'bad_request', message);
export const unauthorized = (message = 'missing or invalid credentials') => new ApiError(401, 'unauthorized', message);
export const forbidden = (message: string) => new ApiError(403, 'forbidden', message);
export const notFound = (message: string) => new ApiError(404, 'not_found', message);
export const conflict = (message: string, retryAfterS?: number) => new ApiError(409, 'conflict', message, retryAfterS === undefined ? {} : { 'retry-after': String(retryAfterS) });
export const gone = (message: string) => new ApiError(410, 'gone', message);
export const tooMany = (code: Extract<ErrorCode, 'rate_limited' | `too_many_${string}`>, message: string, retryAfterS?: number) =>
  new ApiError(429, code, message, retryAfterS === undefined ? {} : { 'retry-after': String(retryAfterS) });
export const unavailable = (message: string) => new ApiError(503, 'unavailable', message);
export const internal = (message = 'internal error') => new ApiError(500, 'internal', message);

/** The whole HTTP/1.1 answer, in the envelope, for a raw socket (a refused or failed WebSocket upgrade): there is no reply object there. */
export function rawErrorResponse(e: ApiError): string {
  const body = JSON.stringify({ error: { code: e.code, message: e.message } });
  return `HTTP/1.1 ${e.status} ${e.code}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}
