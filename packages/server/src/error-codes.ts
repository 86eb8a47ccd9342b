/**
 * Every `error.code` the API answers with, and its HTTP status. The server raises only these
 * (`ApiError` takes an `ErrorCode`), the OpenAPI document lists them as the envelope's enum, and the
 * SDK's types are generated from that. The first code of a status is its generic one.
 */
export const ERROR_CODES = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  rate_limited: 429,
  too_many_sandboxes: 429,
  too_many_snapshots: 429,
  too_many_snapshots_in_flight: 429,
  too_many_builds: 429,
  too_many_templates: 429,
  too_many_volumes: 429,
  header_fields_too_large: 431,
  internal: 500,
  bad_gateway: 502,
  /** The E2B API's: a paused or deleted sandbox, a port it does not serve (as E2B's proxy answers). */
  sandbox_not_running: 502,
  port_not_open: 502,
  unavailable: 503,
  insufficient_storage: 507,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as ErrorCode[];

export const isErrorCode = (c: string): c is ErrorCode => Object.hasOwn(ERROR_CODES, c);

/** The generic code of an HTTP status (for errors raised by Fastify itself), if it has one. */
export function genericCode(status: number): ErrorCode | undefined {
  return ERROR_CODE_LIST.find((c) => ERROR_CODES[c] === status);
}
