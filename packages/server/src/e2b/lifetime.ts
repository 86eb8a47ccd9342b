import { badRequest } from '../errors.ts';
import type { Principal } from '../services/access/principal.ts';
import type { SandboxService } from '../services/sandboxes/sandboxes.ts';
import type { SandboxRecord } from '../store/sandboxes.ts';

/** E2B's default sandbox timeout when a create names none. */
export const DEFAULT_TIMEOUT_S = 15;
/** Sandpit's longest auto-pause window. */
const MAX_TIMEOUT_S = 604_800;

export function checkTimeout(raw: unknown, fallback = DEFAULT_TIMEOUT_S): number {
  const t = raw === undefined || raw === null ? fallback : Number(raw);
  if (!Number.isInteger(t) || t < 1 || t > MAX_TIMEOUT_S) throw badRequest(`timeout must be an integer from 1 to ${MAX_TIMEOUT_S} seconds`);
  return t;
}

/**
 * E2B's TTL on Sandpit's timers: the sandbox auto-pauses `timeout` seconds after it became active, and
 * unless E2B's `autoPause` was asked for, is deleted at that moment (auto_delete_seconds 0).
 */
export function createTimers(timeoutS: number, autoPause: boolean) {
  return autoPause ? { auto_pause_seconds: timeoutS } : { auto_pause_seconds: timeoutS, auto_delete_seconds: 0 };
}

/**
 * Moves the deadline to `timeoutS` from now. Sandpit counts the window from when the sandbox became
 * active, so the time already spent is added. `extendOnly` keeps a later deadline (connect does).
 */
export async function setDeadline(sandboxes: SandboxService, p: Principal, rec: SandboxRecord, timeoutS: number, extendOnly = false): Promise<SandboxRecord> {
  const now = sandboxes.deps.clock.now();
  if (extendOnly && rec.autoPauseAt !== null && rec.autoPauseAt >= now + timeoutS * 1000) return rec;
  // Sandpit's window is whole seconds: the deadline lands within half a second of the one asked for.
  const spent = Math.round((now - (rec.activeSince ?? now)) / 1000);
  return sandboxes.patch(p, rec.id, { auto_pause_seconds: Math.max(1, Math.min(spent + timeoutS, MAX_TIMEOUT_S)) });
}
