import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { notFound, unavailable } from '../errors.ts';
import type { RuntimeDriver, SandboxMoves } from '../runtime/driver.ts';
import { digestOrNotFound, ResumeBody, servePart, Transfer } from './part-serving.ts';
import type { SandboxMover } from './sandbox-mover.ts';

const Id = Type.Object({ sandbox_id: Type.String({ pattern: '^[0-9a-f-]{36}$' }) });
const Part = Type.Object({ sandbox_id: Type.String({ pattern: '^[0-9a-f-]{36}$' }), part: Type.String({ pattern: '^[a-z]{1,16}$' }) });
const NodeRef = (name: string) => Type.Object({ [name]: Type.String({ minLength: 1, maxLength: 128 }) });

/**
 * A node's side of moving sandboxes (drain, migrate), for API replicas and other nodes (the node guard
 * has checked their token): a source is told to move one, the target pulls it (manifest, then each
 * part streamed and its digest); the source switches a paused one over, the target commits a running one (switches it
 * over and resumes it); a target drops a copy the switch did not take.
 */
export async function sandboxMoveRoutes(app: FastifyInstance, driver: RuntimeDriver, mover: SandboxMover, scratch: string) {
  const moves = (): SandboxMoves => {
    if (!driver.moves) throw unavailable(`the ${driver.name} driver cannot move sandboxes`);
    return driver.moves;
  };
  const hide = true;
  app.get<{ Params: { sandbox_id: string } }>('/internal/sandboxes/:sandbox_id/move/manifest', { schema: { hide, params: Id } }, async (req) => {
    const m = await moves().manifest(req.params.sandbox_id);
    if (!m) throw notFound('no paused sandbox with that id on this node');
    return m;
  });
  type PartRequest = FastifyRequest<{ Params: { sandbox_id: string; part: string }; Querystring: { transfer?: string }; Body?: ResumeBody }>;
  const part = async (req: PartRequest, reply: FastifyReply) => {
    let root: string;
    try {
      root = moves().partDir(req.params.sandbox_id, req.params.part);
    } catch {
      throw notFound(`a sandbox has no part '${req.params.part}'`);
    }
    await servePart(reply, scratch, root, req.query.transfer, req.body);
  };
  // GET: the whole part; POST: a resumed copy's rest (ResumeBody).
  app.get('/internal/sandboxes/:sandbox_id/move/parts/:part', { schema: { hide, params: Part, querystring: Transfer } }, part);
  app.post('/internal/sandboxes/:sandbox_id/move/parts/:part', { schema: { hide, params: Part, querystring: Transfer, body: ResumeBody } }, part);
  app.get<{ Params: { sandbox_id: string; part: string }; Querystring: { transfer: string } }>(
    '/internal/sandboxes/:sandbox_id/move/parts/:part/digest',
    { schema: { hide, params: Part, querystring: Type.Required(Transfer) } },
    async (req) => ({ digest: await digestOrNotFound(req.query.transfer) }),
  );
  app.post<{ Params: { sandbox_id: string }; Body: { to: string } }>('/internal/sandboxes/:sandbox_id/move', { schema: { hide, params: Id, body: NodeRef('to') } }, async (req, reply) => {
    await mover.moveOut(req.params.sandbox_id, req.body.to);
    reply.code(204);
  });
  app.post<{ Params: { sandbox_id: string }; Body: { from: string } }>('/internal/sandboxes/:sandbox_id/move-in', { schema: { hide, params: Id, body: NodeRef('from') } }, async (req, reply) => {
    await mover.moveIn(req.params.sandbox_id, req.body.from);
    reply.code(204);
  });
  app.post<{ Params: { sandbox_id: string }; Body: { from: string } }>('/internal/sandboxes/:sandbox_id/move-commit', { schema: { hide, params: Id, body: NodeRef('from') } }, async (req, reply) => {
    await mover.commit(req.params.sandbox_id, req.body.from);
    reply.code(204);
  });
  app.post<{ Params: { sandbox_id: string } }>('/internal/sandboxes/:sandbox_id/discard', { schema: { hide, params: Id } }, async (req, reply) => {
    await mover.discard(req.params.sandbox_id);
    reply.code(204);
  });
}
