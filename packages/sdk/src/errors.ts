import type { components } from './generated/openapi.ts';

/** The API's error codes (its OpenAPI enum); a newer server may answer others. */
export type ErrorCode = components['schemas']['Error']['error']['code'];

/** Base of every error the SDK throws, so callers can catch the SDK's failures in one place. */
export class SandpitError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The client is missing something it needs before any request is made (for example an API key). */
export class ConfigurationError extends SandpitError {}

/** A call or a stream ran past its deadline; the request was aborted. */
export class TimeoutError extends SandpitError {}

/** The server could not be reached, or the connection broke before the answer was complete. */
export class ConnectionError extends SandpitError {}

/** The API answered with an error: `status` is the HTTP status, `code` the contract's stable code (branch on it, not on `message`). */
export class ApiError extends SandpitError {
  readonly status: number;
  readonly code: ErrorCode | (string & {});
  /** From the Retry-After header, when the server sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(status: number, code: string, message: string, retryAfterMs?: number) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfterMs = retryAfterMs;
  }
}

/** 400 `bad_request`: the request or its parameters are invalid. */
export class BadRequestError extends ApiError {}
/** 401: missing or invalid API key or access token. */
export class AuthError extends ApiError {}
/** 403: authenticated, but the key lacks the permission. */
export class ForbiddenError extends ApiError {}
/** 404 `not_found`: the sandbox or resource does not exist. */
export class NotFoundError extends ApiError {}
/** 409 `conflict`: the resource is in the wrong state for the operation. */
export class ConflictError extends ApiError {}
/** 410 `gone`. */
export class GoneError extends ApiError {}
/** 429: a rate or quota limit (`rate_limited`, `too_many_sandboxes`, ...). */
export class RateLimitError extends ApiError {}
/** 5xx: the server failed or is unavailable; GET and DELETE were already retried. */
export class ServerError extends ApiError {}
/** 507 `insufficient_storage`: the disk or volume is full (a volume's size is its quota); nothing was written. */
export class InsufficientStorageError extends ServerError {}

const BY_STATUS: Record<number, typeof ApiError> = {
  400: BadRequestError,
  401: AuthError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  410: GoneError,
  429: RateLimitError,
  507: InsufficientStorageError,
};

/** Codes for answers that did not carry the envelope (a proxy's error page, say): each status's generic code. */
export const FALLBACK_CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'conflict',
  410: 'gone',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  431: 'header_fields_too_large',
  500: 'internal',
  502: 'bad_gateway',
  503: 'unavailable',
  507: 'insufficient_storage',
};

/** The typed error for an API answer with a non-2xx status. */
export function apiError(status: number, code: string | undefined, message: string, retryAfterMs?: number): ApiError {
  const Class = BY_STATUS[status] ?? (status >= 500 ? ServerError : ApiError);
  return new Class(status, code ?? FALLBACK_CODES[status] ?? `http_${status}`, message, retryAfterMs);
}
