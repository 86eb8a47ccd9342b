import type { FastifyRequest } from 'fastify';
import { ApiError, badRequest, unauthorized } from '../../errors.ts';
import type { SandboxService } from '../../services/sandboxes/sandboxes.ts';
import type { SandboxRecord } from '../../store/sandboxes.ts';

/** The port envd listens on in an E2B sandbox; the SDK addresses it in headers and host names. */
export const ENVD_PORT = 49983;
/** The envd release whose API this layer implements in full (octet-stream uploads, closeStdin, file metadata, watch entries). */
export const ENVD_VERSION = '0.6.4';

const HOST = /^(\d+)-([0-9a-z-]+?)\.[^:]/i;

export interface EnvdTarget {
  sandboxId: string;
  port: number;
}

/**
 * The token handed out as `envdAccessToken`: the sandbox id and its access token. Carrying the id lets
 * requests that name no sandbox (older SDKs send /files and /health with the token only) find theirs.
 */
export const envdAccessToken = (sandboxId: string, accessToken: string) => `${sandboxId}.${accessToken}`;

function splitToken(raw: string | undefined): { sandboxId?: string; token?: string } {
  if (!raw) return {};
  const dot = raw.indexOf('.');
  return dot > 0 ? { sandboxId: raw.slice(0, dot), token: raw.slice(dot + 1) } : { token: raw };
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * Which sandbox (and port) an envd request is for: E2b-Sandbox-Id/-Port headers, a `{port}-{id}.{domain}`
 * host, or else the id in an access token sent without an API key (control-plane calls carry X-API-Key).
 */
export function envdTarget(headers: Record<string, string | string[] | undefined>): EnvdTarget | undefined {
  const id = one(headers['e2b-sandbox-id']);
  if (id) return { sandboxId: id, port: Number(one(headers['e2b-sandbox-port']) ?? ENVD_PORT) };
  const m = HOST.exec(one(headers.host) ?? '');
  if (m) return { sandboxId: m[2]!, port: Number(m[1]) };
  if (headers['x-api-key'] !== undefined) return undefined;
  const fromToken = splitToken(one(headers['x-access-token'])).sandboxId;
  return fromToken ? { sandboxId: fromToken, port: ENVD_PORT } : undefined;
}

/** Sandboxes that are paused or gone answer 502, as E2B's proxy does (the SDK reads it as "not running"). */
export const notRunning = (what: string) => new ApiError(502, 'sandbox_not_running', `the sandbox is ${what}`);

/**
 * The sandbox of an envd request, authorised by its access token (handed out as `envdAccessToken`).
 * Unlike Sandpit's data plane, E2B's envd does not resume a paused sandbox: it is 502 until connect.
 */
export async function envdSandbox(sandboxes: SandboxService, req: FastifyRequest): Promise<SandboxRecord> {
  const target = envdTarget(req.headers);
  if (!target) throw badRequest('missing E2b-Sandbox-Id header');
  if (target.port !== ENVD_PORT) throw new ApiError(502, 'port_not_open', `port ${target.port} of the sandbox is not served through the E2B API`);
  const { sandboxId, token } = splitToken(one(req.headers['x-access-token']));
  let rec: SandboxRecord;
  try {
    rec = await sandboxes.getWithToken(target.sandboxId, token);
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 400)) throw notRunning('not found');
    throw err;
  }
  // The token itself is checked against the sandbox; the id in it must name the same one.
  if (sandboxId !== undefined && sandboxId !== rec.id) throw unauthorized('the access token is not for this sandbox');
  if (rec.deletedAt !== null) throw notRunning('not found');
  if (rec.status !== 'active') throw notRunning(rec.status);
  return rec;
}

/** The user a call runs as: E2B sends it as HTTP Basic auth with an empty password; the default is `user`. */
export function envdUser(req: FastifyRequest, fromQuery?: string): string {
  let user = fromQuery;
  const auth = req.headers.authorization;
  if (!user && auth?.startsWith('Basic ')) user = Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':')[0];
  user ||= 'user';
  if (user !== 'user' && user !== 'root') throw unauthorized(`unknown user '${user.slice(0, 32)}'; sandboxes have 'user' and 'root'`);
  return user;
}

export const homeOf = (user: string) => (user === 'root' ? '/root' : '/home/user');

/** E2B resolves relative paths against the calling user's home. */
export function userPath(raw: unknown, user: string): string {
  if (typeof raw !== 'string' || raw === '') throw badRequest('path must not be empty');
  if (raw.startsWith('/')) return raw;
  const rel = raw.startsWith('~/') ? raw.slice(2) : raw === '~' ? '' : raw;
  return rel ? `${homeOf(user)}/${rel}` : homeOf(user);
}
