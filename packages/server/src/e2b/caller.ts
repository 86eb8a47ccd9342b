import type { FastifyRequest } from 'fastify';
import type { AuthService } from '../services/access/auth.ts';
import type { Permission } from '../services/access/permissions.ts';
import type { Principal } from '../services/access/principal.ts';

/** The principal of a control-plane call (E2B's X-API-KEY header), required to hold `perm`. */
export function e2bCaller(auth: AuthService) {
  return async (req: FastifyRequest, perm: Permission): Promise<Principal> => {
    const raw = req.headers['x-api-key'];
    const p = await auth.authenticate(Array.isArray(raw) ? raw[0] : raw);
    // For the audit entry (a refused call is recorded too).
    req.principal = p;
    auth.require(p, perm);
    return p;
  };
}
