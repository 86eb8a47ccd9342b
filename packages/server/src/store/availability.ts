/** PostgreSQL: admin_shutdown, crash_shutdown, cannot_connect_now, and the connection_exception class. */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);

/**
 * Errors that mean the store's server is down or restarting, not that a query was wrong: the
 * request answers 503 and the pool connects afresh for a later one.
 */
export function storeUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const { code, syscall } = err as { code?: unknown; syscall?: unknown };
  if (syscall === 'connect' && (code === 'ECONNREFUSED' || code === 'ENOENT')) return true;
  if (typeof code === 'string' && SQLSTATES.has(code)) return true;
  // pg reports a cut connection, a client that lost it, or no connection to be had without a code.
  return /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect)/.test(err.message);
}
