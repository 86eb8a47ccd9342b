export { ApiKeys } from './api-keys.ts';
export { AuditLog, type AuditLogFilters } from './audit-log.ts';
export { Billing, type PeriodOptions } from './billing.ts';
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
  InsufficientStorageError,
  NotFoundError,
  RateLimitError,
  SandpitError,
  ServerError,
  TimeoutError,
  type ErrorCode,
} from './errors.ts';
export type { CommandOptions, CommandResult, ExecResult, StreamOptions, StreamResult } from './exec.ts';
export { Files, type FileData, type FileWatch, type ReadOptions, type WatchOptions } from './files.ts';
export { DEFAULT_API_URL, type ClientOptions, type RequestOptions } from './http.ts';
export { Desktop, type MouseButton, type Region } from './desktop.ts';
export { PreviewPorts } from './preview-ports.ts';
export { Code, type RunCodeOptions } from './code.ts';
export { Processes, type FollowOptions, type StartProcessOptions } from './processes.ts';
export { Sandbox, type ConnectionOptions, type CreateSandboxOptions, type ListSandboxesOptions } from './sandbox.ts';
export { type LifecycleOptions, Sandboxes, type ListSandboxesFilters } from './sandboxes.ts';
export { Secrets } from './secrets.ts';
export { SshKeys } from './ssh-keys.ts';
export { Snapshots, type CreateSnapshotOptions, type ListSnapshotsFilters } from './snapshots.ts';
export { Team } from './team.ts';
export { Templates, type BuildLogOptions, type BuildResult } from './templates.ts';
export { TerminalConnection, Terminals, type CreateTerminalOptions, type TerminalExit } from './terminals.ts';
export type * from './types.ts';
export { VolumeFiles } from './volume-files.ts';
export { type ListVolumesFilters, Volumes } from './volumes.ts';
export { type ListDeliveriesFilters, verifyWebhook, Webhooks } from './webhooks.ts';
