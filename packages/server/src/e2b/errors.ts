import { ApiError } from '../errors.ts';

/** E2B's error body on control-plane and envd HTTP routes: the SDK branches on the numeric `code`. */
export interface E2bErrorBody {
  code: number;
  message: string;
}

/** Connect RPC error codes (connectrpc.com/docs/protocol#error-codes) this layer answers with. */
export type ConnectCode =
  | 'canceled'
  | 'invalid_argument'
  | 'deadline_exceeded'
  | 'not_found'
  | 'already_exists'
  | 'permission_denied'
  | 'resource_exhausted'
  | 'failed_precondition'
  | 'unimplemented'
  | 'internal'
  | 'unavailable'
  | 'unauthenticated';

export class ConnectError extends Error {
  readonly code: ConnectCode;
  constructor(code: ConnectCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** HTTP status of a unary Connect error, as the protocol maps them. */
export const CONNECT_HTTP_STATUS: Record<ConnectCode, number> = {
  canceled: 499,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  unauthenticated: 401,
};

const FROM_STATUS: Record<number, ConnectCode> = {
  400: 'invalid_argument',
  401: 'unauthenticated',
  403: 'permission_denied',
  404: 'not_found',
  409: 'already_exists',
  410: 'not_found',
  413: 'resource_exhausted',
  429: 'resource_exhausted',
  502: 'unavailable',
  503: 'unavailable',
  507: 'resource_exhausted',
};

/** Sandpit's API errors in Connect terms; anything else is internal and its detail stays in the log. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  if (err instanceof ApiError) return new ConnectError(FROM_STATUS[err.status] ?? 'internal', err.message);
  return new ConnectError('internal', 'internal error');
}

/** Sandpit's API errors in E2B's HTTP shape. */
export function toE2bError(err: unknown): { status: number; body: E2bErrorBody } {
  if (err instanceof ApiError) return { status: err.status, body: { code: err.status, message: err.message } };
  const e = err as { validation?: unknown; statusCode?: number; message?: string };
  if (e.validation) return { status: 400, body: { code: 400, message: e.message ?? 'invalid request' } };
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) return { status: e.statusCode, body: { code: e.statusCode, message: e.message ?? '' } };
  return { status: 500, body: { code: 500, message: 'internal error' } };
}
