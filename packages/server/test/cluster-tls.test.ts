import assert from 'node:assert/strict';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, fetch as tlsFetch } from 'undici';
import { InternalChannel } from '../src/cluster/internal-channel.ts';
import { type CertPair, createClusterCa, issueMemberCert } from '../src/cluster/member-certificates.ts';
import { API_AUDIENCE, signInternalToken } from '../src/internal-token.ts';
import { OPERATOR } from '../src/local-cluster/cluster-certs.ts';
import { LocalCluster } from '../src/local-cluster/local-cluster.ts';
import { until } from './helpers/cluster-steps.ts';
import { Api, IMAGE_DIR } from './helpers/server-process.ts';

/**
 * The internal channel of a cluster (`cluster up`: one API replica, two gVisor nodes) over mutual
 * TLS: what members say to each other goes through it (forwarding, heartbeats, a move between nodes),
 * callers without a valid certificate of the cluster CA are refused, and certificates, the CA
 * included, rotate under traffic.
 */
const LOST_MS = 8000;
let dir: string;
let cluster: LocalCluster;
let api: Api;

const DAY = 86_400_000;
const expired = { notBefore: new Date(Date.now() - 10 * DAY), notAfter: new Date(Date.now() - DAY) };

/** A call with `pair` as client certificate (none: no certificate), not checking the server's: what a stranger can do. */
async function callWith(url: string, pair?: CertPair, headers: Record<string, string> = {}): Promise<{ status: number; message: string }> {
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false, ...(pair ? { cert: pair.cert, key: pair.key } : {}) } });
  try {
    const res = await tlsFetch(url, { headers, dispatcher });
    const body = (await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
    return { status: res.status, message: body?.error?.message ?? '' };
  } finally {
    await dispatcher.close();
  }
}

const apiToken = () => ({ authorization: `Bearer ${signInternalToken(Buffer.from(cluster.state.clusterKey, 'hex'), API_AUDIENCE, 60_000)}` });
const nodeState = async (id: string) => (await cluster.status()).regions[0]!.nodes.find((n) => n.id === id)?.state;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandpit-tls-'));
  cluster = await LocalCluster.up({
    dir,
    apisPerRegion: 1,
    nodesPerRegion: 2,
    durable: false,
    env: { SANDPIT_DRIVER: 'gvisor', SANDPIT_IMAGE_DIR: IMAGE_DIR, SANDPIT_NODE_LOST_MS: String(LOST_MS) },
  });
  api = new Api(cluster.summary().regions[0]!.api_urls[0]!, cluster.apiKey);
});

after(async () => {
  await cluster?.down().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

test('members speak over mutual TLS only: a sandbox is created, used and moved between nodes through it', async () => {
  for (const n of cluster.state.regions[0]!.nodes) assert.match(n.env.SANDPIT_NODE_URL!, /^https:/);
  const created = await api.post('/sandboxes', {});
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  try {
    const pid = (await api.post(`/sandboxes/${id}/exec`, { command: 'sleep 1000 >/dev/null 2>&1 & echo $!' })).body.stdout.trim();
    assert.match(pid, /^\d+$/);
    // Node to node: the target fetches the checkpoint from the source with curl over the same TLS.
    const moved = await api.post(`/sandboxes/${id}/migrate`, {});
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.notEqual(moved.body.node, created.body.node);
    const after = await api.post(`/sandboxes/${id}/exec`, { command: `kill -0 ${pid} && echo alive` });
    assert.equal(after.body.stdout, 'alive\n', 'the process moved with the sandbox');
    const status = await cluster.status();
    assert.deepEqual(
      status.regions[0]!.nodes.map((n) => [n.state, n.url.startsWith('https://')]),
      [
        ['ready', true],
        ['ready', true],
      ],
    );
  } finally {
    await api.del(`/sandboxes/${id}`);
  }
});

test('a caller without a certificate of the cluster CA, with an expired one or of another role is refused; so is a server with an expired one', async () => {
  const node = cluster.member('local-node-1');
  const replica = cluster.state.regions[0]!.apis[0]!;
  const foreignCa = await createClusterCa('someone else');
  const foreign = await issueMemberCert(foreignCa, { name: 'local-api-1', role: 'api' });
  const stale = await cluster.certs.issue('local-api-1', 'api', expired);
  const files = cluster.certs.files(OPERATOR);
  const operator = { cert: await readFile(files.cert, 'utf8'), key: await readFile(files.key, 'utf8') };
  const apiMember = await cluster.certs.issue('local-api-1', 'api');

  await assert.rejects(fetch(`${node.url.replace('https:', 'http:')}/sandboxes`), 'plain HTTP gets no answer from a node');
  const nodeCases: [CertPair | undefined, RegExp][] = [
    [undefined, /no client certificate/],
    [foreign, /certificate of the cluster CA is required/],
    [stale, /CERT_HAS_EXPIRED/],
    [operator, /role api or node/],
    // A good certificate is not enough: the internal token too.
    [apiMember, /internal token/],
  ];
  for (const [pair, why] of nodeCases) {
    const r = await callWith(`${node.url}/sandboxes`, pair);
    assert.equal(r.status, 401, `node: ${why}`);
    assert.match(r.message, why);
  }
  assert.equal((await callWith(`${node.url}/healthz`)).status, 200, 'probes pass without a certificate');

  // A certificate that expires while its connection is kept alive is refused on that connection from then on.
  const brief = await cluster.certs.issue('local-api-1', 'api', { notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 2000) });
  const kept = new Agent({ connections: 1, connect: { rejectUnauthorized: false, cert: brief.cert, key: brief.key } });
  try {
    const first = await tlsFetch(`${node.url}/sandboxes`, { dispatcher: kept });
    assert.match(((await first.json()) as { error: { message: string } }).error.message, /internal token/, 'accepted while valid');
    await new Promise((r) => setTimeout(r, 2500));
    const later = await tlsFetch(`${node.url}/sandboxes`, { dispatcher: kept });
    assert.equal(later.status, 401);
    assert.match(((await later.json()) as { error: { message: string } }).error.message, /CERT_HAS_EXPIRED since the connection was made/);
  } finally {
    await kept.close();
  }

  const internal = `${replica.internalUrl}/internal/nodes`;
  for (const [pair, why] of [
    [undefined, /no client certificate/],
    [foreign, /certificate of the cluster CA is required/],
    [stale, /CERT_HAS_EXPIRED/],
    [apiMember, /role node or operator/],
  ] as [CertPair | undefined, RegExp][]) {
    const r = await callWith(internal, pair, apiToken());
    assert.equal(r.status, 401, `API replica: ${why}`);
    assert.match(r.message, why);
  }
  assert.equal((await callWith(internal, operator, apiToken())).status, 200, "the operator's certificate and token");
  const plain = await fetch(`${replica.url}/internal/nodes`, { headers: apiToken() });
  assert.equal(plain.status, 401, 'the public listener does not serve the internal routes');
  assert.match(((await plain.json()) as { error: { message: string } }).error.message, /TLS/);

  // The other way round: a member refuses a server whose certificate expired.
  const server = createServer({ ...stale, requestCert: false }, (_req, res) => res.end('{}'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const channel = await InternalChannel.tls(files);
  try {
    const port = (server.address() as { port: number }).port;
    await assert.rejects(channel.fetch(`https://127.0.0.1:${port}/`), (err: Error) => /expired/i.test(`${err.message} ${(err.cause as Error)?.message}`));
  } finally {
    channel.close();
    server.close();
  }
});

test('certificates rotate, the CA with them, while requests flow; the old CA is refused afterwards', async () => {
  const created = await api.post('/sandboxes', {});
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const node = cluster.member(created.body.node);
  const oldCaCert = await cluster.certs.issue('local-api-1', 'api');
  const caBefore = await readFile(cluster.certs.files(OPERATOR).ca, 'utf8');
  assert.match((await callWith(`${node.url}/sandboxes`, oldCaCert)).message, /internal token/, 'accepted before: only the token is missing');
  try {
    let stop = false;
    const statuses: number[] = [];
    const traffic = (async () => {
      while (!stop) statuses.push((await api.post(`/sandboxes/${id}/exec`, { command: 'true' })).status);
    })();
    await cluster.rotateCertificates({ newCa: true });
    // Some more after the last step, on connections made with the new CA only.
    const done = statuses.length;
    await until('requests after the rotation', async () => statuses.length >= done + 5);
    stop = true;
    await traffic;
    assert.ok(statuses.length > 10, `requests flowed during the rotation (${statuses.length})`);
    assert.deepEqual([...new Set(statuses)], [200], 'no request failed');
  } finally {
    await api.del(`/sandboxes/${id}`);
  }
  const caAfter = await readFile(cluster.certs.files(OPERATOR).ca, 'utf8');
  assert.notEqual(caAfter, caBefore);
  assert.equal(caAfter.match(/BEGIN CERTIFICATE/g)?.length, 1, 'members trust the new CA alone');
  const refused = await callWith(`${node.url}/sandboxes`, oldCaCert);
  assert.equal(refused.status, 401);
  assert.match(refused.message, /certificate of the cluster CA is required/);
});

test('a node whose certificate expired is turned away until it is lost; a valid one brings it back', async () => {
  await cluster.certs.replace('local-node-2', await cluster.certs.issue('local-node-2', 'node', expired));
  await until('local-node-2 lost: its heartbeats are refused', async () => (await nodeState('local-node-2')) === 'lost', LOST_MS + 30_000);
  assert.equal(await nodeState('local-node-1'), 'ready');
  await cluster.rotateCertificates();
  await until('local-node-2 ready again', async () => (await nodeState('local-node-2')) === 'ready', 30_000);
});
