import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Value } from 'typebox/value';
import { badRequest } from '../errors.ts';
import type { AuthService } from '../services/access/auth.ts';
import type { Principal } from '../services/access/principal.ts';
import type { VolumeService } from '../services/volumes/volumes.ts';
import type { VolumeTokens } from '../services/volumes/volume-tokens.ts';
import { CreateVolumeBody } from '../schemas/volume.ts';
import type { VolumeRecord } from '../store/volumes.ts';
import { e2bCaller } from './caller.ts';

/** E2B's volumes have no size: one made through its API gets this quota (grow it with Sandpit's PATCH /volumes). */
export const E2B_VOLUME_SIZE_MIB = 10 * 1024;

type IdRequest = FastifyRequest<{ Params: { volumeID: string } }>;

export interface E2bVolumeDeps {
  auth: AuthService;
  volumes: VolumeService;
  volumeTokens: VolumeTokens;
  /** SANDPIT_E2B_DOMAIN. */
  e2bDomain?: string;
}

/** E2B's volume control plane (`/volumes`, spec/openapi.yml in e2b-dev/E2B) over Sandpit's volume service. */
export async function volumeRoutes(app: FastifyInstance, deps: E2bVolumeDeps) {
  const { volumes, volumeTokens } = deps;
  const caller = e2bCaller(deps.auth);
  /**
   * E2B's VolumeAndToken: the token opens the volume's files on the volume content API (this port too).
   * `domain` replaces the client's E2B_DOMAIN for those calls (`https://api.<domain>`), so it is sent only
   * when configured: without TLS in front, no domain leads the SDK to this port.
   */
  const domain = deps.e2bDomain === undefined ? {} : { domain: deps.e2bDomain };
  const withToken = (p: Principal, rec: VolumeRecord) => ({ volumeID: rec.id, name: rec.name, token: volumeTokens.issue(rec.id, p.teamId, p.keyId), ...domain });

  app.post('/volumes', async (req, reply) => {
    const p = await caller(req, 'sandboxes:write');
    const body = { name: (req.body as { name?: unknown } | undefined)?.name, size_mib: E2B_VOLUME_SIZE_MIB };
    if (!Value.Check(CreateVolumeBody, body)) throw badRequest('name must be 1 to 63 letters, digits, `.`, `_` or `-`, starting with a letter or digit');
    const rec = await volumes.create(p, body);
    reply.code(201);
    return withToken(p, rec);
  });

  app.get('/volumes', async (req) => {
    const p = await caller(req, 'sandboxes:read');
    const out: { volumeID: string; name: string }[] = [];
    let cursor: string | undefined;
    do {
      const page = await volumes.list(p, { limit: '1000', cursor });
      out.push(...page.items.map((v) => ({ volumeID: v.id, name: v.name })));
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  });

  app.get('/volumes/:volumeID', async (req: IdRequest) => {
    const p = await caller(req, 'sandboxes:read');
    return withToken(p, await volumes.get(p, req.params.volumeID));
  });

  /** Refused (409) while a sandbox mounts the volume, as Sandpit's own DELETE is. */
  app.delete('/volumes/:volumeID', async (req: IdRequest, reply) => {
    const p = await caller(req, 'sandboxes:write');
    await volumes.delete(p, req.params.volumeID);
    return reply.code(204).send();
  });
}
