import fastifyCookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errors } from '../schemas/common.ts';
import { ConsoleSession, SignInBody } from '../schemas/console-session.ts';
import type { Services } from './context.ts';
import { CSRF_HEADER, SESSION_COOKIE } from './session-cookie.ts';

const tags = ['auth'];

/** Sign-in for the web console: an API key becomes an HttpOnly, SameSite=Strict session cookie. */
export async function consoleSessionRoutes(app: FastifyInstance, s: Services) {
  await app.register(fastifyCookie);
  const cookie = (secure: boolean, maxAgeS: number) => ({ path: '/', httpOnly: true, sameSite: 'strict' as const, secure, maxAge: maxAgeS });

  app.post<{ Body: SignInBody }>(
    '/session',
    {
      schema: {
        summary: 'Exchange an API key for a console session cookie (HttpOnly, SameSite=Strict)',
        description: `Requests with the cookie and no X-API-Key act with the key's permissions; mutations must also send the ${CSRF_HEADER} header.`,
        tags,
        security: [],
        body: SignInBody,
        response: { 200: ConsoleSession, ...errors(400, 401) },
      },
    },
    async (req, reply) => {
      const { token, principal: p, expiresAt } = await s.consoleSessions.signIn(req.body.api_key);
      // Who signed in, for the audit log.
      req.principal = p;
      reply.header('cache-control', 'no-store').setCookie(SESSION_COOKIE, token, cookie(req.protocol === 'https', Math.floor(s.consoleSessions.ttlMs / 1000)));
      return { team_id: p.teamId, user_id: p.userId, key_id: p.keyId, permissions: [...p.permissions], expires_at: new Date(expiresAt).toISOString() };
    },
  );

  app.get(
    '/session',
    {
      schema: {
        summary: 'Whether the console session cookie is signed in, and as what (200 either way, so a signed-out page load is not an error)',
        tags,
        security: [],
        response: { 200: Type.Object({ signed_in: Type.Boolean(), session: Type.Optional(Type.Omit(ConsoleSession, ['expires_at'])) }) },
      },
    },
    async (req) => {
      const token = req.cookies[SESSION_COOKIE];
      const p = token ? await s.auth.authenticateSession(token).catch(() => undefined) : undefined;
      if (!p) return { signed_in: false };
      return { signed_in: true, session: { team_id: p.teamId, user_id: p.userId, key_id: p.keyId, permissions: [...p.permissions] } };
    },
  );

  app.delete('/session', { schema: { summary: 'Sign out: ends the console session and clears its cookie', tags, security: [], response: { 204: Type.Null() } } }, async (req, reply) => {
    const token = req.cookies[SESSION_COOKIE];
    if (token) {
      // Who signed out, for the audit log.
      req.principal = await s.auth.authenticateSession(token).catch(() => undefined);
      await s.consoleSessions.signOut(token);
    }
    reply.clearCookie(SESSION_COOKIE, { path: '/' }).code(204);
  });
}
