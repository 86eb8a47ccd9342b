import type { IncomingHttpHeaders } from 'node:http';
import { isUuid, parseSandboxIdLoose, SANDBOX_HOST } from '../ids.ts';
import { PREVIEW_HOST } from '../services/networking/preview-ports.ts';

/** What a request is about, as far as where it must be served: a sandbox, a snapshot, a template build, a volume (id or name), or nothing in particular. */
export type RequestSubject = { kind: 'sandbox'; id: string; region?: string } | { kind: 'snapshot'; id: string } | { kind: 'build'; id: string } | { kind: 'volume'; ref: string } | undefined;

const DATA_PLANE = /^\/(exec|files|processes|terminals)(\/|$)/;
const SANDBOX_PATH = /^\/sandboxes\/([^/?]+)/;
const MIGRATE_PATH = /^\/sandboxes\/[^/?]+\/migrate\/?$/;
const SNAPSHOT_PATH = /^\/snapshots\/([^/?]+)$/;
const BUILD_PATH = /^\/templates\/[^/?]+\/builds\/([^/?]+)/;
/** One volume and its files; the list and the create are not about one volume. */
const VOLUME_PATH = /^\/volumes\/([^/?]+)(\/files(\/list)?)?$/;

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
const hostName = (host: string | undefined) => (host ?? '').replace(/:\d+$/, '');

/**
 * Reads the subject off the request line and headers alone (before any body is read), the same way
 * the routes find it: preview and per-sandbox host names, X-Platform-Sandbox-Id (or `sandbox_id` in
 * the query, for WebSockets) on data-plane paths, and the ids in control-plane paths.
 */
export function requestSubject(method: string, url: string, headers: IncomingHttpHeaders): RequestSubject {
  const host = hostName(one(headers.host));
  const preview = PREVIEW_HOST.exec(host);
  if (preview) return sandbox(preview[2]!);
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (DATA_PLANE.test(path)) {
    const raw = SANDBOX_HOST.exec(host)?.[1] ?? one(headers['x-platform-sandbox-id']) ?? (q < 0 ? undefined : (new URLSearchParams(url.slice(q + 1)).get('sandbox_id') ?? undefined));
    return raw === undefined ? undefined : sandbox(raw);
  }
  // A migrate is run by the API replica itself: it picks the target and tells the source node.
  if (method === 'POST' && MIGRATE_PATH.test(path)) return undefined;
  const sb = SANDBOX_PATH.exec(path);
  if (sb) return sandbox(decode(sb[1]!));
  const snap = SNAPSHOT_PATH.exec(path);
  if (snap && method === 'DELETE') {
    const id = decode(snap[1]!);
    return id !== undefined && isUuid(id) ? { kind: 'snapshot', id: id.toLowerCase() } : undefined;
  }
  const build = BUILD_PATH.exec(path);
  if (build) {
    const id = decode(build[1]!);
    return id !== undefined && isUuid(id) ? { kind: 'build', id: id.toLowerCase() } : undefined;
  }
  const vol = VOLUME_PATH.exec(path);
  if (vol) {
    const ref = decode(vol[1]!);
    return ref === undefined ? undefined : { kind: 'volume', ref };
  }
  return undefined;
}

function sandbox(raw: string | undefined): RequestSubject {
  const parsed = raw === undefined ? undefined : parseSandboxIdLoose(raw);
  return parsed && { kind: 'sandbox', ...parsed };
}

function decode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}
