import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer, type Server, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { InternalChannel } from '../src/cluster/internal-channel.ts';
import { NodePeers } from '../src/cluster/node-peer.ts';
import { digestOrNotFound, ResumeBody, servePart, Transfer } from '../src/cluster/part-serving.ts';
import { TokenCache } from '../src/internal-token.ts';
import { ClusterCerts, OPERATOR } from '../src/local-cluster/cluster-certs.ts';
import { transferScratch, treeManifest, verifyTree } from '../src/runtime/tree-transfer.ts';
import type { NodeRecord, NodeStore } from '../src/store/nodes.ts';

/**
 * A node's fetch of a part through a TCP proxy that spoils the first connection after 1.5 MiB came back
 * (cuts it, or flips one byte of it): the fetch resumes by itself, the sender sends only what the copy
 * lacks, and the copy is whole. On a plain channel the receiver checks the sender's digest; over mutual
 * TLS the channel checks every record, and no digest is asked for.
 */
let dir: string;
let tree: string;
/** The FIFOs' directory of both ends. */
let scratch: string;
const apps: FastifyInstance[] = [];
const proxies: Server[] = [];
const channels: InternalChannel[] = [];
let requests: string[] = [];
let certs: ClusterCerts;

/** A server of the part and its digest, as a node serves them (HTTPS with the channel's options, or plain HTTP). */
async function partServer(channel: InternalChannel): Promise<number> {
  const options = channel.serverOptions();
  // One type for both: the routes below do not care which server carries them.
  const app = (options ? Fastify({ https: options }) : Fastify()) as unknown as FastifyInstance;
  apps.push(app);
  const part = async (req: FastifyRequest<{ Querystring: { transfer?: string }; Body?: ResumeBody }>, reply: FastifyReply) => {
    requests.push(req.method);
    await servePart(reply, scratch, tree, req.query.transfer, req.body);
  };
  app.get('/parts/p', { schema: { querystring: Transfer } }, part);
  app.post('/parts/p', { schema: { querystring: Transfer, body: ResumeBody } }, part);
  app.get<{ Querystring: { transfer: string } }>('/parts/p/digest', async (req) => {
    requests.push('digest');
    return { digest: await digestOrNotFound(req.query.transfer) };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}

/** A proxy to `upstream` whose first connection is cut, or has one byte flipped, once 1.5 MiB came back; the others pass whole. */
async function spoilingProxy(upstream: number, spoil: 'cut' | 'flip'): Promise<number> {
  let connections = 0;
  const proxy = createServer((client) => {
    const first = connections++ === 0;
    const server = connect(upstream, '127.0.0.1');
    let back = 0;
    let spoiled = false;
    client.pipe(server);
    server.on('data', (chunk: Buffer) => {
      back += chunk.length;
      if (first && !spoiled && back > 1.5 * (1 << 20)) {
        spoiled = true;
        if (spoil === 'cut') {
          client.destroy();
          server.destroy();
          return;
        }
        chunk[0]! ^= 1;
      }
      client.write(chunk);
    });
    server.on('end', () => client.end());
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
  });
  proxies.push(proxy);
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return (proxy.address() as AddressInfo).port;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandpit-resume-'));
  tree = join(dir, 'tree');
  scratch = await transferScratch(dir);
  await mkdir(join(tree, 'sub'), { recursive: true });
  for (const [name, byte] of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
    ['sub/d', 4],
  ] as const)
    await writeFile(join(tree, name), Buffer.alloc(1 << 20, byte));
  certs = new ClusterCerts(join(dir, 'certs'));
  await certs.create([{ name: 'n1', role: 'node' }]);
});

after(async () => {
  // The servers first: closing, they drop their idle kept-alive connections, which ends the proxies' too.
  for (const a of apps) await a.close();
  for (const p of proxies) await new Promise((r) => p.close(r));
  for (const c of channels) c.close();
  await rm(dir, { recursive: true, force: true });
});

/** Fetches the part from node n1 at `port` on `channel` into a new directory, and checks the copy against the tree byte for byte. */
async function fetchWhole(channel: InternalChannel, port: number, name: string): Promise<void> {
  const node = { id: 'n1', url: `${channel.scheme}://127.0.0.1:${port}`, lostAt: null, heartbeatAt: Date.now() } as NodeRecord;
  // The store only answers whether the sender is live (it is asked again before resuming).
  const store = { get: async () => ({ ...node, heartbeatAt: Date.now() }) } as unknown as NodeStore;
  const peers = new NodePeers(store, new TokenCache(Buffer.alloc(32, 1)), 10_000, channel, scratch);
  const manifest = await treeManifest(tree);
  const dest = join(dir, name);
  await mkdir(dest);
  requests = [];
  await peers.fetchPart(node, '/parts/p', dest, manifest);
  await verifyTree(dest, manifest);
  for (const f of manifest) assert.ok((await readFile(join(dest, f.path))).equals(await readFile(join(tree, f.path))), `${f.path} is whole`);
}

test('plain channel: a part fetch cut part way resumes by itself with what the copy lacks, each attempt checked by its digest', async () => {
  const channel = InternalChannel.plain();
  const port = await spoilingProxy(await partServer(channel), 'cut');
  await fetchWhole(channel, port, 'plain-copy');
  assert.deepEqual(requests, ['GET', 'POST', 'digest'], 'the whole part, then the rest of it, then the digest of the rest');
});

/** A fetch over mutual TLS, as the operator, from node n1 behind a proxy that spoils the first connection. */
async function fetchOverTls(spoil: 'cut' | 'flip', name: string): Promise<void> {
  const [channel, server] = await Promise.all([InternalChannel.tls(certs.files(OPERATOR)), InternalChannel.tls(certs.files('n1'))]);
  channels.push(channel, server);
  await fetchWhole(channel, await spoilingProxy(await partServer(server), spoil), name);
}

test('mutual TLS: a cut copy resumes the same way, checked by the channel (no digest is taken or asked for)', async () => {
  await fetchOverTls('cut', 'tls-cut-copy');
  assert.deepEqual(requests, ['GET', 'POST']);
});

test('mutual TLS: a byte changed on the way fails that attempt before it reaches the disk; the copy resumes and is whole', async () => {
  await fetchOverTls('flip', 'tls-flipped-copy');
  assert.deepEqual(requests, ['GET', 'POST'], 'the spoiled attempt failed, and only the rest was sent again');
});
