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
import { treeManifest, verifyTree } from '../src/runtime/tree-transfer.ts';
import type { NodeRecord, NodeStore } from '../src/store/nodes.ts';

/**
 * A node's fetch of a part whose connection is cut part way (a TCP proxy between the two drops the
 * first connection after 1.5 MiB): the fetch resumes by itself, the sender sends only what the copy
 * lacks, and the copy is whole.
 */
let dir: string;
let tree: string;
let app: FastifyInstance;
let proxy: Server;
const requests: string[] = [];
let proxied = 0;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandpit-resume-'));
  tree = join(dir, 'tree');
  await mkdir(join(tree, 'sub'), { recursive: true });
  for (const [name, byte] of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
    ['sub/d', 4],
  ] as const)
    await writeFile(join(tree, name), Buffer.alloc(1 << 20, byte));
  app = Fastify();
  const part = async (req: FastifyRequest<{ Querystring: { transfer?: string }; Body?: ResumeBody }>, reply: FastifyReply) => {
    requests.push(req.method);
    await servePart(reply, tree, req.query.transfer, req.body);
  };
  app.get('/parts/p', { schema: { querystring: Transfer } }, part);
  app.post('/parts/p', { schema: { querystring: Transfer, body: ResumeBody } }, part);
  app.get<{ Querystring: { transfer: string } }>('/parts/p/digest', async (req) => ({ digest: await digestOrNotFound(req.query.transfer) }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const upstream = (app.server.address() as AddressInfo).port;
  // The first connection is cut once 1.5 MiB came back; the others pass whole.
  proxy = createServer((client) => {
    const first = proxied++ === 0;
    const server = connect(upstream, '127.0.0.1');
    let back = 0;
    client.pipe(server);
    server.on('data', (chunk: Buffer) => {
      back += chunk.length;
      if (first && back > 1.5 * (1 << 20)) {
        client.destroy();
        server.destroy();
        return;
      }
      client.write(chunk);
    });
    server.on('end', () => client.end());
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
});

after(async () => {
  await new Promise((r) => proxy?.close(r));
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

test('a part fetch cut part way resumes by itself with what the copy lacks, and the copy is whole', async () => {
  const node = {
    id: 'n1',
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    lostAt: null,
    heartbeatAt: Date.now(),
  } as NodeRecord;
  // The store only answers whether the sender is live (it is asked again before resuming).
  const store = { get: async () => ({ ...node, heartbeatAt: Date.now() }) } as unknown as NodeStore;
  const peers = new NodePeers(store, new TokenCache(Buffer.alloc(32, 1)), 10_000, InternalChannel.plain());
  const manifest = await treeManifest(tree);
  const dest = join(dir, 'copy');
  await mkdir(dest);
  await peers.fetchPart(node, '/parts/p', dest, manifest);
  assert.deepEqual(requests, ['GET', 'POST'], 'the whole part, then the rest of it');
  await verifyTree(dest, manifest);
  for (const f of manifest) assert.ok((await readFile(join(dest, f.path))).equals(await readFile(join(tree, f.path))), `${f.path} is whole`);
});
