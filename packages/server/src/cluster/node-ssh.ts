import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createWebSocketStream, WebSocket } from 'ws';
import type { NodeDirectory } from './node-client.ts';

/** Where a node's SSH gateway is reached by the API replicas relaying logins to it. */
const NODE_SSH_PATH = '/internal/ssh';
/** A node that does not take the WebSocket by then is not answering. */
const OPEN_MS = 10_000;

/**
 * An API replica's way to the SSH gateway of the node holding a sandbox: a WebSocket on the node's
 * internal API, signed for that node and over the internal channel (mutual TLS when configured).
 */
export function nodeSshStreams(directory: NodeDirectory, ownRegion: string): (sandboxId: string) => Promise<Duplex> {
  return async (sandboxId) => {
    const node = await directory.ofSandbox(sandboxId);
    if (!node || !directory.isLive(node)) throw new Error('no live node holds this sandbox');
    if (node.region !== ownRegion) throw new Error(`the sandbox lives in region '${node.region}': log in through that region's SSH gateway`);
    const url = new URL(NODE_SSH_PATH, node.url);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    // A zero mask, which both ends of ws skip: masking keeps a browser's script from steering proxies' caches, and
    // here it only cost an XOR of every byte of the relayed SSH stream (already encrypted, between members) in JavaScript.
    const ws = new WebSocket(url, { agent: directory.channel.agent, headers: directory.headers(node), perMessageDeflate: false, handshakeTimeout: OPEN_MS, generateMask: (mask) => mask.fill(0) });
    // The stream first: what the node sends with its answer to the upgrade (its SSH banner) is read before 'open' is handled.
    const stream = createWebSocketStream(ws);
    stream.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => {
        reject(new Error(`the node answered ${res.statusCode}`));
        ws.terminate();
      });
    });
    return stream;
  };
}

/** A node's SSH entry: each WebSocket's bytes are one SSH connection to the node's gateway (the node's guard checked the internal token first). */
export async function nodeSshRoute(app: FastifyInstance, accept: (stream: Duplex, remoteAddress: string) => void): Promise<void> {
  app.get(NODE_SSH_PATH, { websocket: true, schema: { hide: true } }, (socket: WebSocket, req) => {
    accept(createWebSocketStream(socket), req.socket.remoteAddress ?? req.ip);
  });
}
