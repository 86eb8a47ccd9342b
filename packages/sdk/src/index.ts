export { ApiKeys } from './api-keys.ts';
export { SandpitClient } from './client.ts';
export { Commands } from './commands.ts';
export {
  ApiError,
  AuthError,
  BadRequestError,
  ConfigurationError,
  ConflictError,
  ConnectionError,
  ForbiddenError,
  GoneError,
  NotFoundError,
  RateLimitError,
  SandpitError,
  ServerError,
  TimeoutError,
} from './errors.ts';
export type { CommandOptions, CommandResult, ExecResult, StreamOptions, StreamResult } from './exec.ts';
export { DEFAULT_API_URL, type ClientOptions, type RequestOptions } from './http.ts';
export { Sandbox, type ConnectionOptions, type CreateSandboxOptions, type ListSandboxesOptions } from './sandbox.ts';
export { Sandboxes, type ListSandboxesFilters } from './sandboxes.ts';
export type * from './types.ts';
