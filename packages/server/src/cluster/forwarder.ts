import { Agent, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createProxyServer } from 'http-proxy-3';
import { ApiError, badRequest, conflict, rawErrorResponse } from '../errors.ts';
import { snapshotCopyKey } from '../schemas/node.ts';
import type { CreateSandboxBody } from '../schemas/sandbox.ts';
import type { Principal } from '../services/access/principal.ts';
import type { Placement, PlacementNeed } from '../services/fleet/placement.ts';
import type { RegionService } from '../services/fleet/regions.ts';
import type { TemplateCatalog } from '../services/templates/template-catalog.ts';
import { BASE_RESOURCES } from '../services/templates/template-info.ts';
import type { NodeRecord } from '../store/nodes.ts';
import type { SnapshotStore } from '../store/snapshots.ts';
import type { NodeDirectory } from './node-client.ts';
import { requestSubject } from './request-target.ts';
import { type VolumeHomes, volumeNodeLost } from './volume-homes.ts';

export interface ForwarderDeps {
  directory: NodeDirectory;
  placement: Placement;
  catalog: TemplateCatalog;
  snapshots: SnapshotStore;
  regions: RegionService;
  volumes: VolumeHomes;
}

/** Set on a request one region forwards to another: the receiving region serves it or fails, never forwards again. */
const VIA_REGION = 'x-sandpit-via-region';

type Target = { node: NodeRecord } | { region: string; url: string };

/**
 * An API replica's edge (`SANDPIT_ROLE=api`): a request about a sandbox (control plane by path, data
 * plane by header or host, previews by host, HTTP and WebSocket) or a volume is proxied as a stream to
 * the node holding it, before any body is read here; creates (sandboxes, volumes) and template builds
 * are placed on a node first.
 * The node runs the same routes and rules. What no live node holds is answered here from the store.
 * A sandbox (snapshot, build) of another region goes, as it came, to an API replica of that region.
 */
export async function forwardToNodes(app: FastifyInstance, deps: ForwarderDeps): Promise<void> {
  const { directory } = deps;
  // Kept-alive connections: to nodes the channel's (a new agent after each certificate rotation), to other regions' public URLs this one.
  const proxy = createProxyServer({ xfwd: true, proxyTimeout: 0, agent: new Agent({ keepAlive: true, maxSockets: 256 }) });
  proxy.on('error', (err, _req, res) => {
    const e = new ApiError(503, 'unavailable', `the node holding it did not answer: ${(err as NodeJS.ErrnoException).code ?? err.message}`);
    if ('writeHead' in res) {
      if (!res.headersSent) res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: e.code, message: e.message } }));
    } else {
      (res as Socket).destroy();
    }
  });

  const own = deps.regions.own;
  const target = async (method: string, url: string, headers: IncomingMessage['headers']): Promise<Target | undefined> => {
    if (url.startsWith('/internal/')) return undefined;
    const subject = requestSubject(method, url, headers);
    if (!subject) return undefined;
    const node =
      subject.kind === 'volume'
        ? await deps.volumes.ofRequest(subject.ref, headers)
        : subject.kind === 'sandbox'
          ? await directory.ofSandbox(subject.id)
          : subject.kind === 'snapshot'
            ? await directory.ofSnapshot(subject.id)
            : await directory.ofBuild(subject.id);
    if (!node) return undefined;
    if (node.region !== own) {
      if (headers[VIA_REGION] !== undefined) throw new ApiError(503, 'unavailable', `region '${own}' was asked for a sandbox of region '${node.region}' by another region: not forwarded again`);
      return { region: node.region, url: await deps.regions.endpoint(node.region) };
    }
    return directory.isLive(node) ? { node } : undefined;
  };
  const options = (t: Target) => ('node' in t ? { target: t.node.url, headers: directory.headers(t.node), agent: directory.channel.agent } : { target: t.url, headers: { [VIA_REGION]: own } });

  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    // WebSocket upgrades are proxied by the upgrade listener below.
    if (req.headers.upgrade) {
      reply.hijack();
      return;
    }
    const t = await target(req.method, req.url, req.headers);
    if (!t) return;
    reply.hijack();
    proxy.web(req.raw, reply.raw, options(t));
  });

  // Creates and builds: the body is read and validated here (placement depends on it), then sent on.
  app.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    const route = req.routeOptions.url;
    if (req.method !== 'POST' || (route !== '/sandboxes' && route !== '/templates' && route !== '/volumes') || !req.principal) return;
    const body = (req.body ?? {}) as CreateSandboxBody;
    const send = (t: Target) => {
      const json = Buffer.from(JSON.stringify(body));
      const o = options(t);
      reply.hijack();
      proxy.web(req.raw, reply.raw, { ...o, headers: { ...o.headers, 'content-type': 'application/json', 'content-length': String(json.length) }, buffer: Readable.from([json]) });
    };
    // A volume takes no memory or vCPUs: it goes to the least loaded ready node.
    const need = route === '/sandboxes' ? await sandboxNeed(deps, req.principal, body) : route === '/volumes' ? { region: own, vcpus: 0, memoryMib: 0 } : baseNeed(own);
    if (need.region !== own) {
      if (req.headers[VIA_REGION] !== undefined) throw new ApiError(503, 'unavailable', `region '${own}' was asked to create in region '${need.region}' by another region: not forwarded again`);
      return send({ region: need.region, url: await deps.regions.endpoint(need.region) });
    }
    const { node, release } = await deps.placement.choose(need);
    reply.raw.on('close', release);
    send({ node });
  });

  app.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', () => undefined);
    target(req.method ?? 'GET', req.url ?? '/', req.headers)
      .then((t) => {
        if (!t) throw new ApiError(503, 'unavailable', 'no live node holds this sandbox');
        proxy.ws(req, socket, head, options(t));
      })
      .catch((err: unknown) => {
        socket.end(rawErrorResponse(err instanceof ApiError ? err : new ApiError(500, 'internal', 'internal error')));
      });
  });
}

function baseNeed(region: string): PlacementNeed {
  return { region, vcpus: BASE_RESOURCES.vcpu_count, memoryMib: BASE_RESOURCES.memory_mib };
}

/**
 * Where a create runs: the region asked for (this one by default; 400 for one nobody knows); a fork
 * on its snapshot's node while that takes sandboxes, else preferably on one holding a copy of it, else on another that fetches the snapshot, in the snapshot's region, with the snapshot's resources (a fork into another
 * region is refused: snapshots are not shipped between regions); a team template prefers a node
 * holding its files. A create that mounts volumes (a fork: those its snapshot's sandbox mounted) runs
 * on the node keeping them; a snapshot held elsewhere is shipped there.
 */
async function sandboxNeed(deps: ForwarderDeps, p: Principal, body: CreateSandboxBody): Promise<PlacementNeed> {
  const need = await imageNeed(deps, p, body);
  const home = await deps.volumes.ofCreate(p.teamId, body);
  if (home === undefined) return need;
  const node = await deps.directory.node(home);
  if (!node) throw volumeNodeLost('a volume it mounts', home);
  // Snapshots are not shipped between regions, and a region asked for is kept.
  if ((need.holder !== undefined || body.region !== undefined) && need.region !== node.region) {
    throw conflict(`the volumes it mounts live on node '${home}' of region '${node.region}', not in region '${need.region}'`);
  }
  return { ...need, region: node.region, node: home };
}

async function imageNeed(deps: ForwarderDeps, p: Principal, body: CreateSandboxBody): Promise<PlacementNeed> {
  const asked = body.region;
  if (asked !== undefined && !(await deps.regions.known(asked))) throw badRequest(`unknown region '${asked.slice(0, 64)}'`);
  if (body.from_snapshot !== undefined) {
    const snap = await deps.snapshots.get(body.from_snapshot.toLowerCase()).catch(() => undefined);
    const holder = snap && snap.teamId === p.teamId && snap.nodeId ? await deps.directory.node(snap.nodeId) : undefined;
    // An unknown snapshot is placed anywhere: the node answers it as the contract says.
    if (!snap || !holder) return baseNeed(asked ?? deps.regions.own);
    if (asked !== undefined && asked !== holder.region) {
      throw badRequest(`snapshot ${snap.id} lives in region '${holder.region}': fork it there (snapshots are not copied between regions)`);
    }
    return { region: holder.region, vcpus: snap.resources.vcpu_count, memoryMib: snap.resources.memory_mib, holder: holder.id, templateKey: snapshotCopyKey(snap.id) };
  }
  const region = asked ?? deps.regions.own;
  const ref = body.from_template;
  if (ref === undefined || ref.startsWith('platform/')) return baseNeed(region);
  const t = await deps.catalog.find(p.teamId, ref).catch(() => undefined);
  return { ...baseNeed(region), ...(t?.version ? { templateKey: t.version.key } : {}) };
}
