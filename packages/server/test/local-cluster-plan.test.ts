import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cidrsOverlap, parseCidr4 } from '../src/network/addr.ts';
import { parseRegions, planCluster } from '../src/local-cluster/plan.ts';

const input = {
  dir: '/c',
  regions: ['a', 'b'],
  apisPerRegion: 2,
  nodesPerRegion: 3,
  ports: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  internalPorts: [11, 12, 13, 14],
  tls: (name: string) => ({ ca: '/c/tls/ca.crt', cert: `/c/tls/${name}.crt`, key: `/c/tls/${name}.key` }),
  databaseUrl: 'postgres://sandpit@localhost/sandpit?host=%2Fc%2Fpostgres',
  apiKey: 'sp_key',
  clusterKey: 'k'.repeat(64),
  secretsKey: 's'.repeat(64),
  imageDir: '/images',
};

test('a cluster plan gives every member its own port, data dir, log and settings; nodes point at their region over mutual TLS', () => {
  const plans = planCluster(input);
  const members = plans.flatMap((r) => [...r.apis, ...r.nodes]);
  assert.deepEqual(
    plans.map((r) => [r.name, r.apis.map((a) => a.name), r.nodes.map((n) => n.name)]),
    [
      ['a', ['a-api-1', 'a-api-2'], ['a-node-1', 'a-node-2', 'a-node-3']],
      ['b', ['b-api-1', 'b-api-2'], ['b-node-1', 'b-node-2', 'b-node-3']],
    ],
  );
  for (const key of ['port', 'dataDir', 'log', 'url'] as const) assert.equal(new Set(members.map((m) => m[key])).size, members.length, `${key} is unique`);
  for (const m of members) {
    assert.equal(m.env.PORT, String(m.port));
    assert.equal(m.env.SANDPIT_DATA_DIR, m.dataDir);
    assert.equal(m.env.SANDPIT_REGION, m.region);
    assert.equal(m.env.SANDPIT_ROLE, m.role);
    assert.equal(m.env.SANDPIT_E2B_PORT, '0', 'members run side by side: no shared E2B port');
    assert.equal(m.env.SANDPIT_SECRETS_KEY, input.secretsKey, 'one secrets key for all');
    assert.deepEqual([m.env.SANDPIT_TLS_CA, m.env.SANDPIT_TLS_CERT, m.env.SANDPIT_TLS_KEY], ['/c/tls/ca.crt', `/c/tls/${m.name}.crt`, `/c/tls/${m.name}.key`], 'its own certificate');
  }
  const apis = members.filter((m) => m.role === 'api');
  assert.deepEqual(
    apis.map((m) => [m.internalPort, m.env.SANDPIT_INTERNAL_PORT, m.internalUrl]),
    [11, 12, 13, 14].map((p) => [p, String(p), `https://127.0.0.1:${p}`]),
    'each API replica has an internal TLS listener',
  );
  for (const m of apis) assert.match(m.url, /^http:/, "clients' URL");
  for (const m of members.filter((x) => x.role === 'node')) assert.match(m.url, /^https:/, 'a node serves only TLS');
  const [a, b] = plans;
  for (const n of a!.nodes) {
    assert.equal(n.env.SANDPIT_NODE_ID, n.name);
    assert.equal(n.env.SANDPIT_API_URL, a!.apis.map((x) => x.internalUrl).join(','));
    assert.equal(n.env.SANDPIT_PUBLIC_URL, a!.apis[0]!.url);
    assert.equal(n.env.SANDPIT_NODE_URL, n.url);
  }
  assert.equal(b!.nodes[0]!.env.SANDPIT_API_URL, b!.apis.map((x) => x.internalUrl).join(','));
  assert.equal(a!.apis[0]!.env.SANDPIT_BOOTSTRAP_API_KEY, 'sp_key');

  // Node pools: disjoint from each other, from the single-host default and from the host's reserved ranges.
  const pools = members.filter((m) => m.role === 'node').map((m) => m.env.SANDPIT_NET_POOL!);
  assert.equal(pools[0], '100.112.0.0/20');
  for (const [i, p] of pools.entries()) {
    for (const q of [...pools.slice(i + 1), '100.96.0.0/12', '203.0.113.0/24', '10.255.255.0/24']) {
      assert.equal(cidrsOverlap(parseCidr4(p)!, parseCidr4(q)!), false, `${p} and ${q} do not overlap`);
    }
  }
});

test('region names are checked as SANDPIT_REGION checks them', () => {
  assert.deepEqual(parseRegions('a, b2'), ['a', 'b2']);
  assert.throws(() => parseRegions('a,A'), /\[a-z0-9\]\+/);
  assert.throws(() => parseRegions('a,a'), /twice/);
  assert.throws(() => parseRegions(' , '), /at least one/);
  assert.throws(() => planCluster({ ...input, ports: [1] }), /one port per member/);
  assert.throws(() => planCluster({ ...input, internalPorts: [1] }), /one internal port per API replica/);
  assert.throws(() => planCluster({ ...input, apisPerRegion: 0, ports: [1, 2, 3, 4, 5, 6] }), /at least one API/);
  assert.throws(() => planCluster({ ...input, regions: ['a'], nodesPerRegion: 257, ports: [] }), /at most 256 nodes/);
});
