import type { FastifyRequest } from 'fastify';
import { forbidden } from '../errors.ts';
import type { AuthService } from '../services/access/auth.ts';
import type { Principal } from '../services/access/principal.ts';

export const SESSION_COOKIE = 'sandpit_session';
/** Mutations made with the session cookie must carry this header: a cross-site form or image cannot set it. */
export const CSRF_HEADER = 'x-sandpit-console';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
const COOKIE_RE = new RegExp(`(?:^|;\\s*)${SESSION_COOKIE}=([^;]+)`);

/** The session token in a raw Cookie header: the rate limit runs before cookies are parsed and counts per session. */
export function sessionCookieOf(header: string | undefined): string | undefined {
  return header ? COOKIE_RE.exec(header)?.[1] : undefined;
}

/**
 * The principal of the request's console session, when it has no X-API-Key but a session cookie.
 * SameSite=Strict keeps the cookie off cross-site requests; the custom header (which forces a CORS
 * preflight this server never grants) and a same-origin Origin check back it up on mutations.
 */
export async function sessionPrincipal(req: FastifyRequest, auth: AuthService): Promise<Principal | undefined> {
  const token = req.cookies?.[SESSION_COOKIE];
  if (!token || !auth.sessions) return undefined;
  if (!SAFE.has(req.method)) {
    if (req.headers[CSRF_HEADER] === undefined) throw forbidden(`requests signed in with the console session must send the ${CSRF_HEADER} header`);
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `${req.protocol}://${req.host}`) throw forbidden('cross-origin request refused');
  }
  return auth.authenticateSession(token);
}
