import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { badRequest, unauthorized } from '../errors.ts';
import type { AuthService } from '../services/access/auth.ts';
import type { Principal } from '../services/access/principal.ts';
import { closesUnreadUpload, type VolumeFiles } from '../services/volumes/volume-files.ts';
import { isUuid } from '../ids.ts';
import type { VolumeTokens } from '../services/volumes/volume-tokens.ts';
import type { Ownership, VolumeStat, VolumeTree } from '../services/volumes/volume-tree.ts';
import type { VolumeService } from '../services/volumes/volumes.ts';
import { toE2bError } from './errors.ts';

export interface E2bVolumeContentDeps {
  auth: AuthService;
  volumes: VolumeService;
  volumeFiles: VolumeFiles;
  volumeTree: VolumeTree;
  volumeTokens: VolumeTokens;
}

interface ContentQuery {
  path?: string;
  depth?: string;
  uid?: string;
  gid?: string;
  mode?: string;
  force?: string;
}
type ContentRequest = FastifyRequest<{ Params: { volumeID: string }; Querystring: ContentQuery }>;

const TYPES: Record<VolumeStat['type'], string> = { file: 'file', dir: 'directory', symlink: 'symlink', other: 'unknown' };

/** E2B's VolumeEntryStat. */
const entryStat = (s: VolumeStat) => ({
  name: s.name,
  type: TYPES[s.type],
  path: s.path,
  size: s.size,
  mode: s.mode,
  uid: s.uid,
  gid: s.gid,
  atime: s.atime.toISOString(),
  mtime: s.mtime.toISOString(),
  ctime: s.ctime.toISOString(),
  ...(s.target === undefined ? {} : { target: s.target }),
});

function pathOf(q: ContentQuery): string {
  if (typeof q.path !== 'string' || q.path.length === 0 || q.path.length > 4096) throw badRequest('path: 1 to 4096 characters');
  return q.path;
}

function uintOf(q: ContentQuery, name: 'depth' | 'uid' | 'gid' | 'mode'): number | undefined {
  const raw = q[name];
  if (raw === undefined) return undefined;
  if (!/^\d{1,10}$/.test(raw)) throw badRequest(`${name} must be a non-negative integer`);
  return Number(raw);
}

const ownershipOf = (q: ContentQuery): Ownership => ({ uid: uintOf(q, 'uid'), gid: uintOf(q, 'gid'), mode: uintOf(q, 'mode') });
const hasOwnership = (o: Ownership) => o.uid !== undefined || o.gid !== undefined || o.mode !== undefined;

/**
 * E2B's volume content API (spec/openapi-volumecontent.yml in e2b-dev/E2B) over Sandpit's volume
 * files: `Authorization: Bearer <token>` from the control plane's VolumeAndToken, which opens one volume
 * with the rights of the key it was issued to. Paths resolve beneath the volume's root on the host.
 */
export async function volumeContentRoutes(app: FastifyInstance, deps: E2bVolumeContentDeps) {
  const { auth, volumes, volumeFiles, volumeTree, volumeTokens } = deps;
  // The content API's error body carries its code as a string.
  app.setErrorHandler((err, req, reply) => {
    const { status, body } = toE2bError(err);
    if (status >= 500) req.log.error({ err: { message: (err as Error).message } }, 'e2b volume content request failed');
    return reply.code(status).send({ code: String(body.code), message: body.message });
  });

  /** The caller and the volume's id: the token must have been issued for this volume (by id or by its name in the token's team). */
  const caller = async (req: ContentRequest, perm: 'sandboxes:read' | 'sandboxes:write'): Promise<{ p: Principal; volumeId: string }> => {
    const header = req.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : undefined;
    const claimed = volumeTokens.claimedTeam(token);
    const param = req.params.volumeID;
    const volumeId = !claimed ? undefined : isUuid(param) ? param.toLowerCase() : (await volumes.get({ teamId: claimed } as Principal, param).catch(() => undefined))?.id;
    const issued = volumeId === undefined ? undefined : volumeTokens.check(token, volumeId);
    if (!issued || volumeId === undefined) throw unauthorized('invalid volume token');
    const p = await auth.authenticateKeyId(issued.teamId, issued.keyId);
    req.principal = p;
    auth.require(p, perm);
    return { p, volumeId };
  };

  app.get('/volumecontent/:volumeID/path', async (req: ContentRequest) => {
    const { p, volumeId } = await caller(req, 'sandboxes:read');
    return entryStat(await volumeTree.stat(p, volumeId, pathOf(req.query)));
  });

  app.patch('/volumecontent/:volumeID/path', async (req: ContentRequest) => {
    const { p, volumeId } = await caller(req, 'sandboxes:write');
    const body = (req.body ?? {}) as Record<string, unknown>;
    const o: Ownership = {};
    for (const k of ['uid', 'gid', 'mode'] as const) {
      const v = body[k];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffff_fffe) throw badRequest(`${k} must be a non-negative integer`);
      o[k] = v;
    }
    return entryStat(await volumeTree.setOwnership(p, volumeId, pathOf(req.query), o));
  });

  app.delete('/volumecontent/:volumeID/path', async (req: ContentRequest, reply) => {
    const { p, volumeId } = await caller(req, 'sandboxes:write');
    await volumeTree.removeTree(p, volumeId, pathOf(req.query));
    return reply.code(204).send();
  });

  app.get('/volumecontent/:volumeID/dir', async (req: ContentRequest) => {
    const { p, volumeId } = await caller(req, 'sandboxes:read');
    const entries = await volumeTree.list(p, volumeId, pathOf(req.query), uintOf(req.query, 'depth') ?? 1);
    return entries.map(entryStat);
  });

  /** `force` makes missing parents and accepts a directory that exists (E2B's makeDir). */
  app.post('/volumecontent/:volumeID/dir', async (req: ContentRequest, reply) => {
    const { p, volumeId } = await caller(req, 'sandboxes:write');
    const stat = await volumeTree.makeDir(p, volumeId, pathOf(req.query), { ...ownershipOf(req.query), parents: req.query.force === 'true' });
    reply.code(201);
    return entryStat(stat);
  });

  app.get('/volumecontent/:volumeID/file', async (req: ContentRequest, reply) => {
    const { p, volumeId } = await caller(req, 'sandboxes:read');
    const { stream, size } = await volumeFiles.download(p, volumeId, pathOf(req.query));
    return reply.type('application/octet-stream').header('content-length', size).send(stream);
  });

  /** Missing parents are made, as Sandpit's upload does; something already at the path is replaced only with `force`, else 409. */
  app.put('/volumecontent/:volumeID/file', async (req: ContentRequest, reply) => {
    const { p, volumeId } = await caller(req, 'sandboxes:write');
    const path = pathOf(req.query);
    const owner = ownershipOf(req.query);
    const length = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
    const body = req.body ?? req.raw;
    if (!(body instanceof Readable)) throw badRequest('send the content as application/octet-stream');
    try {
      await volumeFiles.upload(p, volumeId, path, body, length, req.query.force === 'true');
    } catch (err) {
      if (closesUnreadUpload(req.raw)) reply.header('connection', 'close');
      throw err;
    }
    const stat = hasOwnership(owner) ? await volumeTree.setOwnership(p, volumeId, path, owner) : await volumeTree.stat(p, volumeId, path);
    reply.code(201);
    return entryStat(stat);
  });
}
