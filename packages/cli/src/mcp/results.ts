import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../sdk.ts';

/** A tool's answer as pretty JSON text (what every MCP client shows to the model). */
export function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] };
}

/** A tool error the model can act on: the API's stable code and status first, then its message. */
export function errorResult(err: unknown): CallToolResult {
  const text = err instanceof ApiError ? `${err.code} (HTTP ${err.status}): ${err.message}` : `${(err as Error).name}: ${(err as Error).message}`;
  return { content: [{ type: 'text', text }], isError: true };
}

/** Runs a tool body; a failure becomes an error result instead of a protocol error. */
export async function guarded(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (err) {
    return errorResult(err);
  }
}
