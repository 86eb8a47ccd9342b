import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createProxyServer } from 'http-proxy-3';
import { ApiError } from '../errors.ts';
import type { CreateSandboxBody } from '../schemas/sandbox.ts';
import type { Principal } from '../services/auth.ts';
import type { Placement, PlacementNeed } from '../services/placement.ts';
import type { TemplateCatalog } from '../services/template-catalog.ts';
import { BASE_RESOURCES } from '../services/template-info.ts';
import type { NodeRecord } from '../store/nodes.ts';
import type { SnapshotStore } from '../store/snapshots.ts';
import type { NodeDirectory } from './node-client.ts';
import { requestSubject } from './request-target.ts';

export interface ForwarderDeps {
  directory: NodeDirectory;
  placement: Placement;
  catalog: TemplateCatalog;
  snapshots: SnapshotStore;
  region: string;
}

const errorBody = (e: ApiError) => JSON.stringify({ error: { code: e.code, message: e.message } });

/**
 * An API replica's edge (`SANDPIT_ROLE=api`): a request about a sandbox (control plane by path, data
 * plane by header or host, previews by host, HTTP and WebSocket) is proxied as a stream to the node
 * holding it, before any body is read here; creates and template builds are placed on a node first.
 * The node runs the same routes and rules. What no live node holds is answered here from the store.
 */
export async function forwardToNodes(app: FastifyInstance, deps: ForwarderDeps): Promise<void> {
  const { directory } = deps;
  const proxy = createProxyServer({ xfwd: true, proxyTimeout: 0, agent: directory.agent });
  proxy.on('error', (err, _req, res) => {
    const e = new ApiError(503, 'unavailable', `the sandbox's node did not answer: ${(err as NodeJS.ErrnoException).code ?? err.message}`);
    if ('writeHead' in res) {
      if (!res.headersSent) res.writeHead(503, { 'content-type': 'application/json' });
      res.end(errorBody(e));
    } else {
      (res as Socket).destroy();
    }
  });

  const target = async (method: string, url: string, headers: IncomingMessage['headers']): Promise<NodeRecord | undefined> => {
    if (url.startsWith('/internal/')) return undefined;
    const subject = requestSubject(method, url, headers);
    if (!subject) return undefined;
    const node = subject.kind === 'sandbox' ? await directory.ofSandbox(subject.id) : subject.kind === 'snapshot' ? await directory.ofSnapshot(subject.id) : await directory.ofBuild(subject.id);
    return node && directory.isLive(node) ? node : undefined;
  };

  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    // WebSocket upgrades are proxied by the upgrade listener below.
    if (req.headers.upgrade) {
      reply.hijack();
      return;
    }
    const node = await target(req.method, req.url, req.headers);
    if (!node) return;
    reply.hijack();
    proxy.web(req.raw, reply.raw, { target: node.url, headers: directory.headers(node) });
  });

  // Creates and builds: the body is read and validated here (placement depends on it), then sent on.
  app.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.method !== 'POST' || (req.routeOptions.url !== '/sandboxes' && req.routeOptions.url !== '/templates') || !req.principal) return;
    const need = req.routeOptions.url === '/sandboxes' ? await sandboxNeed(deps, req.principal, (req.body ?? {}) as CreateSandboxBody) : baseNeed(deps.region);
    const { node, release } = await deps.placement.choose(need);
    const body = Buffer.from(JSON.stringify(req.body ?? {}));
    reply.hijack();
    reply.raw.on('close', release);
    proxy.web(req.raw, reply.raw, {
      target: node.url,
      headers: { ...directory.headers(node), 'content-type': 'application/json', 'content-length': String(body.length) },
      buffer: Readable.from([body]),
    });
  });

  app.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', () => undefined);
    target(req.method ?? 'GET', req.url ?? '/', req.headers)
      .then((node) => {
        if (!node) throw new ApiError(503, 'unavailable', 'no live node holds this sandbox');
        proxy.ws(req, socket, head, { target: node.url, headers: directory.headers(node) });
      })
      .catch((err: unknown) => {
        const e = err instanceof ApiError ? err : new ApiError(500, 'internal', 'internal error');
        const body = errorBody(e);
        socket.end(`HTTP/1.1 ${e.status} ${e.code}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      });
  });
}

function baseNeed(region: string): PlacementNeed {
  return { region, vcpus: BASE_RESOURCES.vcpu_count, memoryMib: BASE_RESOURCES.memory_mib };
}

/** A fork runs on its snapshot's node with the snapshot's resources; a team template prefers a node holding its files. */
async function sandboxNeed(deps: ForwarderDeps, p: Principal, body: CreateSandboxBody): Promise<PlacementNeed> {
  if (body.from_snapshot !== undefined) {
    const snap = await deps.snapshots.get(body.from_snapshot.toLowerCase()).catch(() => undefined);
    // An unknown snapshot is placed anywhere: the node answers it as the contract says.
    if (snap && snap.teamId === p.teamId && snap.nodeId) return { region: deps.region, vcpus: snap.resources.vcpu_count, memoryMib: snap.resources.memory_mib, pinned: snap.nodeId };
    return baseNeed(deps.region);
  }
  const ref = body.from_template;
  if (ref === undefined || ref.startsWith('platform/')) return baseNeed(deps.region);
  const t = await deps.catalog.find(p.teamId, ref).catch(() => undefined);
  return { ...baseNeed(deps.region), ...(t?.version ? { templateKey: t.version.key } : {}) };
}
