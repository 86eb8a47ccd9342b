import type { FastifyInstance, FastifyRequest } from 'fastify';
import { iso } from '../clock.ts';
import { ApiError } from '../errors.ts';
import { API_AUDIENCE, verifyInternalToken } from '../internal-token.ts';
import { errors } from '../schemas/common.ts';
import type { NodeDrain } from '../cluster/drain.ts';
import type { InternalChannel } from '../cluster/internal-channel.ts';
import type { MemberRole } from '../cluster/member-certificates.ts';
import { DrainAnswer, HeartbeatAnswer, isSnapshotCopyKey, NodeActionParams, NodeList, NodeListQuery, NodeReport } from '../schemas/node.ts';
import type { NodeService, NodeView } from '../services/fleet/nodes.ts';

/** Who calls an API replica's internal routes: nodes (heartbeats) and operators (list, cordon, drain). */
const CALLERS: readonly MemberRole[] = ['node', 'operator'];

const view = (n: NodeView) => ({
  id: n.id,
  region: n.region,
  url: n.url,
  state: n.status,
  vcpus: n.vcpus,
  memory_mib: n.memoryMib,
  disk_mib: n.diskMib,
  max_sandboxes: n.maxSandboxes,
  labels: n.labels,
  engines: n.engines,
  templates: n.templates.filter((k) => !isSnapshotCopyKey(k)).length,
  heartbeat_at: iso(n.heartbeatAt),
  sandboxes: n.load.sandboxes,
  allocated_vcpus: n.load.vcpus,
  allocated_memory_mib: n.load.memoryMib,
});

/**
 * The internal channel's API-replica side: nodes register and heartbeat here, operators (the
 * `sandpit cluster` commands) list them (with their sandboxes on request), cordon and drain them (a drain moves the node's sandboxes and answers what it did). Every call carries a token signed with
 * the cluster key for the `api` audience (`Authorization: Bearer ...`), and with internal TLS comes over
 * it with a node's or operator's certificate; anything else is 401.
 */
export async function internalNodeRoutes(app: FastifyInstance, edge: { nodes: NodeService; drain: NodeDrain; key: Buffer; channel: InternalChannel }) {
  const { nodes, drain, key, channel } = edge;
  const onRequest = async (req: FastifyRequest) => {
    // With internal TLS, only the TLS listener serves these, to nodes and operators holding the cluster's certificates.
    const why = channel.refusal(req.raw.socket, CALLERS);
    if (why) throw new ApiError(401, 'unauthorized', why);
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7) : undefined;
    if (!verifyInternalToken(key, token, API_AUDIENCE)) throw new ApiError(401, 'unauthorized', 'a valid internal token is required');
  };
  const hide = true;

  app.post<{ Body: NodeReport }>('/internal/nodes/heartbeat', { onRequest, schema: { hide, body: NodeReport, response: { 200: HeartbeatAnswer, ...errors(400, 401) } } }, async (req) => {
    const b = req.body;
    return nodes.heartbeat({
      id: b.id,
      region: b.region,
      url: b.url,
      vcpus: b.vcpus,
      memoryMib: b.memory_mib,
      diskMib: b.disk_mib,
      maxSandboxes: b.max_sandboxes,
      engines: b.engines,
      labels: b.labels,
      templates: b.templates,
      allocated: { sandboxes: b.allocated.sandboxes, vcpus: b.allocated.vcpus, memoryMib: b.allocated.memory_mib },
    });
  });

  app.get<{ Querystring: { sandboxes?: 'true' | 'false' } }>(
    '/internal/nodes',
    { onRequest, schema: { hide, querystring: NodeListQuery, response: { 200: NodeList, ...errors(400, 401) } } },
    async (req) => {
      const list = (await nodes.list()).map(view);
      if (req.query.sandboxes !== 'true') return { nodes: list };
      const held = await nodes.sandboxesByNode();
      return { nodes: list.map((n) => ({ ...n, sandbox_list: held.get(n.id) ?? [] })) };
    },
  );

  app.post<{ Params: NodeActionParams }>(
    '/internal/nodes/:node_id/:action',
    { onRequest, schema: { hide, params: NodeActionParams, response: { 200: DrainAnswer, 204: { type: 'null' }, ...errors(400, 401, 404) } } },
    async (req, reply) => {
      const { node_id, action } = req.params;
      if (action === 'drain') return drain.drain(node_id);
      await nodes.setState(node_id, action === 'uncordon' ? 'ready' : 'cordoned');
      reply.code(204);
    },
  );
}
