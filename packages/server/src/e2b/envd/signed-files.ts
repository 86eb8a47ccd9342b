import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.ts';
import type { SandboxService } from '../../services/sandboxes/sandboxes.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';
import { envdAccessToken, envdSandbox, notRunning } from './target.ts';

interface SignedQuery {
  path?: string;
  username?: string;
  signature?: string;
  signature_expiration?: string;
}

const unauthorized = (message: string) => new ApiError(401, 'unauthorized', message);

/** envd's v1 signature: SHA-256 (base64, unpadded) of path, operation, user, access token and the expiry if any. */
function signature(q: SignedQuery, operation: 'read' | 'write', token: string): Buffer {
  const parts = [q.path ?? '', operation, q.username ?? '', token];
  if (q.signature_expiration !== undefined) parts.push(q.signature_expiration);
  return Buffer.from(`v1_${createHash('sha256').update(parts.join(':')).digest('base64').replace(/=+$/, '')}`);
}

/**
 * The sandbox of a `/files` request: a signed URL (`signature`, `signature_expiration`) or envd's headers.
 * A signed URL made by an SDK pointed at one E2B_SANDBOX_URL names no sandbox, so the signature itself
 * finds it: it is checked against the running sandboxes' tokens (a hash each).
 */
export async function filesSandbox(sandboxes: SandboxService, req: FastifyRequest<{ Querystring: SignedQuery }>, operation: 'read' | 'write'): Promise<SandboxRecord> {
  const q = req.query;
  if (q.signature === undefined) return envdSandbox(sandboxes, req);
  if (q.signature_expiration !== undefined) {
    const exp = Number(q.signature_expiration);
    if (!Number.isInteger(exp)) throw unauthorized('invalid signature expiration');
    if (exp * 1000 < sandboxes.deps.clock.now()) throw unauthorized('signature is already expired');
  }
  const given = Buffer.from(q.signature);
  const live = await sandboxes.deps.store.listLive();
  const rec = live.find((r) => {
    const want = signature(q, operation, envdAccessToken(r.id, r.accessToken));
    return want.length === given.length && timingSafeEqual(want, given);
  });
  if (!rec) throw unauthorized('invalid signature');
  if (rec.status !== 'active') throw notRunning(rec.status);
  return rec;
}
