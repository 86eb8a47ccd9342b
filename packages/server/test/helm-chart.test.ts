import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rename, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { Agent, fetch as tlsFetch } from 'undici';
import { DaemonSet, Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { Secret, Service } from 'kubernetes-models/v1';
import { createDatabase, PostgresCluster } from './helpers/postgres.ts';
import { CLI, freePort, ServerProcess } from './helpers/server-process.ts';
import { until } from './helpers/cluster-steps.ts';
import { renderChart } from './helpers/helm-subset.ts';
import { API_AUDIENCE, signInternalToken } from '../src/internal-token.ts';

/**
 * deploy/helm/sandpit, rendered offline (helpers/helm-subset.ts: no helm binary here) and every object
 * checked against the Kubernetes schemas of kubernetes-models; then the paths its probes name and the
 * command its preStop hook runs are exercised against a real API replica and node.
 */
const CHART = new URL('../../../deploy/helm/sandpit', import.meta.url).pathname;
const MODELS: Record<string, { validate(): void } & (new (data: never) => { validate(): void })> = {
  'apps/v1/Deployment': Deployment as never,
  'apps/v1/DaemonSet': DaemonSet as never,
  'apps/v1/StatefulSet': StatefulSet as never,
  'v1/Service': Service as never,
  'v1/Secret': Secret as never,
};
const CLUSTER_KEY = 'ab'.repeat(32);

type Obj = Record<string, any>;

function render(overrides: Record<string, unknown>): Obj[] {
  const { objects } = renderChart(CHART, overrides);
  for (const o of objects) {
    const Model = MODELS[`${o.apiVersion}/${o.kind}`];
    assert.ok(Model, `no schema for ${o.apiVersion} ${o.kind}`);
    new Model(o as never).validate();
  }
  return objects;
}

const one = (objs: Obj[], kind: string, component: string) => {
  const found = objs.filter((o) => o.kind === kind && o.metadata.labels?.['app.kubernetes.io/component'] === component);
  assert.equal(found.length, 1, `one ${kind} for ${component}`);
  return found[0]!;
};
const env = (c: Obj, name: string) => c.env.find((e: Obj) => e.name === name);
const container = (o: Obj) => o.spec.template.spec.containers[0];
/** The Secret of the internal channel's certificates (`sandpit cluster certs`), required while internal TLS is on (the default). */
const TLS = { internalTls: { existingSecret: 'sandpit-tls' } };
const TLS_ENV = ['SANDPIT_TLS_CA', 'SANDPIT_TLS_CERT', 'SANDPIT_TLS_KEY'];

describe('the chart', () => {
  const database = { url: 'postgres://u:p@db.example:5432/sandpit' };
  const external = render({ clusterKey: CLUSTER_KEY, database, ...TLS });
  const plain = render({ clusterKey: CLUSTER_KEY, database, internalTls: { enabled: false } });

  test('the validation can fail: a wrong type is refused by the schema', () => {
    const bad = structuredClone(one(external, 'DaemonSet', 'node'));
    bad.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    assert.throws(() => new DaemonSet(bad as never).validate(), /containerPort must be integer/);
  });

  test('API replicas are a Deployment behind a Service, with no privileges', () => {
    const api = one(external, 'Deployment', 'api');
    const svc = one(external, 'Service', 'api');
    assert.equal(api.spec.replicas, 2);
    for (const [k, v] of Object.entries(svc.spec.selector)) assert.equal(api.spec.template.metadata.labels[k], v, `the Service selects the API pods (${k})`);
    const c = api.spec.template.spec.containers[0];
    assert.ok(c.ports.some((p: Obj) => p.name === svc.spec.ports[0].targetPort));
    assert.equal(env(c, 'SANDPIT_ROLE').value, 'api');
    // The replicas' SSH gateway, exposed by the Service; a node opens no SSH port of its own.
    assert.equal(env(c, 'SANDPIT_SSH_PORT').value, '2222');
    const ssh = svc.spec.ports.find((p: Obj) => p.name === 'ssh');
    assert.equal(ssh.port, 2222);
    assert.ok(c.ports.some((p: Obj) => p.name === ssh.targetPort && p.containerPort === 2222));
    assert.equal(env(container(one(external, 'DaemonSet', 'node')), 'SANDPIT_SSH_PORT').value, '0');
    assert.equal(api.spec.template.spec.hostNetwork, undefined);
    assert.equal(c.securityContext.privileged, undefined);
    assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
  });

  test('nodes are a DaemonSet on labelled hosts, privileged on the host network, draining in preStop', () => {
    const ds = one(external, 'DaemonSet', 'node');
    const spec = ds.spec.template.spec;
    assert.deepEqual(spec.nodeSelector, { 'sandpit.dev/node': 'true' });
    assert.equal(spec.hostNetwork, true);
    assert.equal(spec.dnsPolicy, 'ClusterFirstWithHostNet');
    const c = spec.containers[0];
    assert.equal(c.securityContext.privileged, true);
    assert.equal(env(c, 'SANDPIT_ROLE').value, 'node');
    assert.equal(env(c, 'SANDPIT_API_URL').value, 'https://sandpit-api.sandpit.svc:8443');
    assert.equal(env(c, 'SANDPIT_NODE_URL').value, 'https://$(HOST_IP):3100');
    assert.equal(env(c, 'HOST_IP').valueFrom.fieldRef.fieldPath, 'status.hostIP');
    const preStop = c.lifecycle.preStop.exec.command.join(' ');
    assert.match(preStop, /sandpit cluster drain --via-env/);
    assert.match(c.lifecycle.postStart.exec.command.join(' '), /sandpit cluster uncordon --via-env/);
    assert.ok(spec.terminationGracePeriodSeconds >= 3600, 'time for the drain');
    const data = c.volumeMounts.find((m: Obj) => m.name === 'data');
    assert.equal(data.mountPath, '/var/lib/sandpit');
    assert.equal(spec.volumes.find((v: Obj) => v.name === 'data').hostPath.path, '/var/lib/sandpit');
  });

  test('probes name the health paths on named ports of their container, HTTPS on a node with internal TLS', () => {
    for (const objs of [external, plain]) {
      for (const o of [one(objs, 'Deployment', 'api'), one(objs, 'DaemonSet', 'node')]) {
        const c = container(o);
        assert.equal(c.readinessProbe.httpGet.path, '/readyz');
        assert.equal(c.livenessProbe.httpGet.path, '/healthz');
        for (const p of [c.readinessProbe, c.livenessProbe]) assert.ok(c.ports.some((port: Obj) => port.name === p.httpGet.port));
      }
    }
    // The API replicas' public port stays plain HTTP; a node serves HTTPS only with internal TLS.
    for (const p of ['readinessProbe', 'livenessProbe']) assert.equal(container(one(external, 'Deployment', 'api'))[p].httpGet.scheme, undefined);
    for (const p of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
      assert.equal(container(one(external, 'DaemonSet', 'node'))[p].httpGet.scheme, 'HTTPS', p);
      assert.equal(container(one(external, 'DaemonSet', 'node'))[p].httpGet.port, 'https', p);
      assert.equal(container(one(plain, 'DaemonSet', 'node'))[p].httpGet.scheme, undefined, p);
      assert.equal(container(one(plain, 'DaemonSet', 'node'))[p].httpGet.port, 'http', p);
    }
  });

  test('internal TLS (the default): each pod mounts only its own pair and the CA of the Secret, and nodes reach the replicas on their internal listener', () => {
    const api = one(external, 'Deployment', 'api');
    const svc = one(external, 'Service', 'api');
    const ds = one(external, 'DaemonSet', 'node');
    for (const [o, role] of [
      [api, 'api'],
      [ds, 'node'],
    ] as const) {
      const spec = o.spec.template.spec;
      const c = container(o);
      const volume = spec.volumes.find((v: Obj) => v.name === 'tls');
      assert.equal(volume.secret.secretName, 'sandpit-tls', role);
      // Not the other role's key, and not the CA key (it is not in the Secret at all).
      assert.deepEqual(
        volume.secret.items.map((i: Obj) => [i.key, i.path]),
        ['ca.crt', `${role}.crt`, `${role}.key`].map((f) => [f, f]),
        role,
      );
      assert.equal(volume.secret.items.find((i: Obj) => i.key === `${role}.key`).mode, 0o400, role);
      const mount = c.volumeMounts.find((m: Obj) => m.name === 'tls');
      assert.equal(mount.readOnly, true, role);
      assert.equal(mount.subPath, undefined, `${role}: a subPath mount would not follow the Secret's updates`);
      assert.deepEqual(
        TLS_ENV.map((name) => env(c, name).value),
        ['ca.crt', `${role}.crt`, `${role}.key`].map((f) => `${mount.mountPath}/${f}`),
        role,
      );
    }
    const c = container(api);
    assert.deepEqual(
      c.ports.map((p: Obj) => [p.name, p.containerPort]),
      [
        ['http', 3000],
        ['ssh', 2222],
        ['internal', 8443],
      ],
    );
    assert.equal(env(c, 'SANDPIT_INTERNAL_PORT').value, '8443');
    const internal = svc.spec.ports.find((p: Obj) => p.name === 'internal');
    assert.deepEqual([internal.port, internal.targetPort], [8443, 'internal']);
    // What a node's heartbeats and preStop drain dial: the API Service's internal port, over HTTPS.
    const apiUrl = new URL(env(container(ds), 'SANDPIT_API_URL').value);
    assert.equal(apiUrl.protocol, 'https:');
    assert.equal(apiUrl.hostname, `${svc.metadata.name}.${svc.metadata.namespace}.svc`);
    assert.equal(Number(apiUrl.port), internal.port);
    assert.equal(env(container(ds), 'SANDPIT_NODE_URL').value, 'https://$(HOST_IP):3100');
    assert.deepEqual(
      container(ds).ports.map((p: Obj) => [p.name, p.containerPort]),
      [['https', 3100]],
    );
    // Another port and Secret name are followed everywhere.
    const other = render({ clusterKey: CLUSTER_KEY, database, internalTls: { existingSecret: 'certs-2', port: 9443 } });
    assert.equal(env(container(one(other, 'DaemonSet', 'node')), 'SANDPIT_API_URL').value, 'https://sandpit-api.sandpit.svc:9443');
    assert.equal(env(container(one(other, 'Deployment', 'api')), 'SANDPIT_INTERNAL_PORT').value, '9443');
    assert.equal(one(other, 'Service', 'api').spec.ports.find((p: Obj) => p.name === 'internal').port, 9443);
    for (const kind of ['Deployment', 'DaemonSet']) {
      const o = other.find((x) => x.kind === kind)!;
      assert.equal(o.spec.template.spec.volumes.find((v: Obj) => v.name === 'tls').secret.secretName, 'certs-2');
    }
  });

  test('internal TLS off: no certificates, no internal listener, plain HTTP between members', () => {
    const api = one(plain, 'Deployment', 'api');
    const ds = one(plain, 'DaemonSet', 'node');
    for (const o of [api, ds]) {
      const c = container(o);
      for (const name of [...TLS_ENV, 'SANDPIT_INTERNAL_PORT']) assert.equal(env(c, name), undefined, name);
      assert.equal(
        c.volumeMounts.find((m: Obj) => m.name === 'tls'),
        undefined,
      );
      assert.equal(
        o.spec.template.spec.volumes.find((v: Obj) => v.name === 'tls'),
        undefined,
      );
      assert.ok(!c.ports.some((p: Obj) => p.name === 'internal' || p.name === 'https'));
    }
    assert.deepEqual(
      one(plain, 'Service', 'api').spec.ports.map((p: Obj) => p.name),
      ['http', 'ssh'],
    );
    assert.equal(env(container(ds), 'SANDPIT_API_URL').value, 'http://sandpit-api.sandpit.svc:80');
    assert.equal(env(container(ds), 'SANDPIT_NODE_URL').value, 'http://$(HOST_IP):3100');
    assert.ok(!JSON.stringify(plain).includes('sandpit-tls'));
  });

  test('internal TLS without its Secret is refused, naming the value and the way out', () => {
    assert.throws(() => render({ clusterKey: CLUSTER_KEY, database }), /internalTls\.existingSecret is required.*ca\.crt, api\.crt, api\.key, node\.crt and node\.key.*internalTls\.enabled=false/);
    assert.throws(() => render({ clusterKey: CLUSTER_KEY, database, internalTls: { enabled: true, existingSecret: '' } }), /internalTls\.existingSecret is required/);
  });

  test('the cluster key and database URL are a Secret every process reads', () => {
    const secret = external.find((o) => o.kind === 'Secret')!;
    assert.equal(secret.stringData['cluster-key'], CLUSTER_KEY);
    assert.equal(secret.stringData['database-url'], 'postgres://u:p@db.example:5432/sandpit');
    assert.equal(external.filter((o) => o.kind === 'StatefulSet').length, 0, 'no bundled PostgreSQL unless asked');
    for (const o of [one(external, 'Deployment', 'api'), one(external, 'DaemonSet', 'node')]) {
      const c = o.spec.template.spec.containers[0];
      for (const [name, key] of [
        ['SANDPIT_CLUSTER_KEY', 'cluster-key'],
        ['SANDPIT_DATABASE_URL', 'database-url'],
      ]) {
        const ref = env(c, name!).valueFrom.secretKeyRef;
        assert.equal(ref.name, secret.metadata.name);
        assert.equal(ref.key, key);
      }
    }
  });

  test('a trial bundles PostgreSQL, and the database URL names its Service', () => {
    const trial = render({ clusterKey: CLUSTER_KEY, bundledPostgres: { enabled: true, password: 'trial1' }, ...TLS });
    const pg = one(trial, 'StatefulSet', 'postgres');
    const svc = one(trial, 'Service', 'postgres');
    assert.equal(pg.spec.replicas, 1);
    const secret = trial.find((o) => o.kind === 'Secret')!;
    assert.equal(secret.stringData['database-url'], `postgres://sandpit:trial1@${svc.metadata.name}:5432/sandpit`);
    assert.equal(env(pg.spec.template.spec.containers[0], 'POSTGRES_PASSWORD').valueFrom.secretKeyRef.key, 'postgres-password');
  });

  test('an existing Secret replaces the chart-made one; a missing key or database is refused', () => {
    const objs = render({ existingSecret: 'mine', database: { url: 'postgres://x' }, ...TLS });
    assert.equal(objs.filter((o) => o.kind === 'Secret').length, 0);
    assert.equal(env(one(objs, 'DaemonSet', 'node').spec.template.spec.containers[0], 'SANDPIT_CLUSTER_KEY').valueFrom.secretKeyRef.name, 'mine');
    assert.throws(() => render({ database: { url: 'postgres://x' }, ...TLS }), /clusterKey is required/);
    assert.throws(() => render({ clusterKey: CLUSTER_KEY, ...TLS }), /database.url is required/);
  });
});

describe('what the chart runs, against a real API replica and node', () => {
  const key = randomBytes(32).toString('hex');
  const base = { SANDPIT_CLUSTER_KEY: key, SANDPIT_DRIVER: 'container', SANDPIT_NODE_LOST_MS: '3000' };
  let pg: PostgresCluster;
  let db: { url: string; drop: () => Promise<void> };
  let api: ServerProcess;
  let node: ServerProcess;

  before(async () => {
    pg = await PostgresCluster.start();
    db = await createDatabase(pg.adminUrl);
    api = await ServerProcess.start({ ...base, SANDPIT_DATABASE_URL: db.url, SANDPIT_ROLE: 'api' });
    node = await ServerProcess.start({ ...base, SANDPIT_DATABASE_URL: db.url, SANDPIT_ROLE: 'node', SANDPIT_NODE_ID: 'k8s-host-1', SANDPIT_API_URL: api.url, SANDPIT_NET_POOL: '100.90.0.0/16' });
  });

  after(async () => {
    await api?.stop().catch(() => undefined);
    await node?.stop().catch(() => undefined);
    await db?.drop().catch(() => undefined);
    await pg?.stop();
  });

  const get = async (url: string) => {
    const res = await fetch(url);
    return { status: res.status, body: (await res.json()) as Obj };
  };
  const nodeState = async () => {
    const res = await fetch(`${api.url}/internal/nodes`, { headers: { authorization: `Bearer ${signInternalToken(Buffer.from(key, 'hex'), API_AUDIENCE, 60_000)}` } });
    return ((await res.json()) as { nodes: Obj[] }).nodes.find((n) => n.id === 'k8s-host-1')?.state;
  };

  test('liveness and readiness answer on the API replica and, without a token, on the node', async () => {
    assert.deepEqual((await get(`${api.url}/healthz`)).body, { status: 'ok' });
    const apiReady = await get(`${api.url}/readyz`);
    assert.equal(apiReady.status, 200);
    assert.deepEqual(apiReady.body.checks, { store: 'ok' });
    assert.equal((await get(`${node.url}/healthz`)).status, 200);
    await until('the node is registered and ready', async () => (await get(`${node.url}/readyz`)).status === 200);
    assert.deepEqual((await get(`${node.url}/readyz`)).body.checks, { store: 'ok', registered: 'ok' });
    // The probes are the only way past the node's guard.
    assert.equal((await get(`${node.url}/info`)).status, 401);
  });

  test('the preStop command drains this node through the API replicas, and postStart takes it back', async () => {
    const nodeEnv = { ...process.env, ...base, SANDPIT_DATABASE_URL: db.url, SANDPIT_ROLE: 'node', SANDPIT_NODE_ID: 'k8s-host-1', SANDPIT_API_URL: `http://127.0.0.1:1,${api.url}` };
    const drained = await promisify(execFile)(process.execPath, [CLI, 'cluster', 'drain', '--via-env'], { env: nodeEnv });
    assert.match(drained.stdout, /k8s-host-1: drain done/);
    assert.equal(await nodeState(), 'draining');
    await promisify(execFile)(process.execPath, [CLI, 'cluster', 'uncordon', '--via-env'], { env: nodeEnv });
    assert.equal(await nodeState(), 'ready');
  });

  test('a node no API replica accepts is not ready', async () => {
    await api.stop();
    await until('the node reports it is not registered', async () => (await get(`${node.url}/readyz`)).status === 503);
    const res = await get(`${node.url}/readyz`);
    assert.equal(res.body.error.code, 'unavailable');
    assert.match(res.body.error.message, /registered: no API replica has accepted a heartbeat/);
  });
});

/**
 * The chart with internal TLS (its default), run for real: the files of `sandpit cluster certs` (one
 * certificate for all API replicas, one for all nodes), laid out as the kubelet mounts the chart's
 * Secret volumes, at the paths of the chart's TLS settings. The probes, the heartbeats to the internal
 * listener, the preStop drain, and a Secret update rotating the certificates.
 */
describe('what the chart runs with internal TLS, on the files of `sandpit cluster certs` mounted as the kubelet mounts a Secret', () => {
  const key = randomBytes(32).toString('hex');
  const base = { SANDPIT_CLUSTER_KEY: key, SANDPIT_DRIVER: 'container', SANDPIT_NODE_LOST_MS: '3000' };
  const chart = render({ clusterKey: key, database: { url: 'postgres://x' }, ...TLS });
  const pods = { api: one(chart, 'Deployment', 'api'), node: one(chart, 'DaemonSet', 'node') };
  let work: string;
  let pg: PostgresCluster;
  let db: { url: string; drop: () => Promise<void> };
  let api: ServerProcess;
  let node: ServerProcess;
  let internalUrl: string;
  let nodeEnv: Record<string, string>;

  const certs = (out: string, ...more: string[]) => promisify(execFile)(process.execPath, [CLI, 'cluster', 'certs', '--out', out, ...more]);

  /**
   * A pod's Secret volume as the kubelet writes it: the chart's items in a directory of their own, `..data`
   * linking to it, each file a link through `..data`; an update swaps `..data` in one rename.
   */
  async function mountSecret(role: 'api' | 'node', from: string, version: number): Promise<void> {
    const dir = join(work, role);
    const items: Obj[] = pods[role].spec.template.spec.volumes.find((v: Obj) => v.name === 'tls').secret.items;
    await mkdir(join(dir, `..v${version}`), { recursive: true });
    for (const i of items) {
      await copyFile(join(from, i.key), join(dir, `..v${version}`, i.path));
      await chmod(join(dir, `..v${version}`, i.path), i.mode ?? 0o644);
    }
    await symlink(`..v${version}`, join(dir, '..data_tmp'));
    await rename(join(dir, '..data_tmp'), join(dir, '..data'));
    if (version === 1) for (const i of items) await symlink(join('..data', i.path), join(dir, i.path));
    else await rm(join(dir, `..v${version - 1}`), { recursive: true });
  }

  /** The chart's TLS settings of `role`, with its mount path where the test mounted the Secret. */
  const tlsEnv = (role: 'api' | 'node') => {
    const c = container(pods[role]);
    const mountPath = c.volumeMounts.find((m: Obj) => m.name === 'tls').mountPath;
    return Object.fromEntries(TLS_ENV.map((name) => [name, env(c, name).value.replace(mountPath, join(work, role))]));
  };

  /** The SHA-256 fingerprint of what a TLS listener on loopback presents. */
  const presented = (port: number) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.end();
      });
      socket.on('error', reject);
    });
  const fingerprint = async (file: string) => new X509Certificate(await readFile(file)).fingerprint256;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'sandpit-chart-tls-'));
    await certs(join(work, 'certs'), '--api-host', 'sandpit-api.sandpit.svc');
    await mountSecret('api', join(work, 'certs'), 1);
    await mountSecret('node', join(work, 'certs'), 1);
    pg = await PostgresCluster.start();
    db = await createDatabase(pg.adminUrl);
    const internalPort = await freePort();
    internalUrl = `https://127.0.0.1:${internalPort}`;
    api = await ServerProcess.start({ ...base, ...tlsEnv('api'), SANDPIT_DATABASE_URL: db.url, SANDPIT_ROLE: 'api', SANDPIT_INTERNAL_PORT: String(internalPort) });
    nodeEnv = { ...base, ...tlsEnv('node'), SANDPIT_DATABASE_URL: db.url, SANDPIT_ROLE: 'node', SANDPIT_NODE_ID: 'k8s-host-2', SANDPIT_API_URL: internalUrl };
    node = await ServerProcess.start({ ...nodeEnv, SANDPIT_NET_POOL: '100.91.0.0/16' });
  });

  after(async () => {
    await api?.stop().catch(() => undefined);
    await node?.stop().catch(() => undefined);
    await db?.drop().catch(() => undefined);
    await pg?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const nodeUrl = () => `https://127.0.0.1:${node.port}`;
  /** As the kubelet probes: HTTPS, no client certificate, the server's certificate not checked. */
  const probe = async (url: string) => {
    const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
    try {
      return (await tlsFetch(url, { dispatcher })).status;
    } finally {
      await dispatcher.close();
    }
  };
  /** The operator's certificate of `cluster certs`, on the internal listener. */
  const nodeState = async () => {
    const [ca, cert, certKey] = await Promise.all(['ca.crt', 'operator.crt', 'operator.key'].map((f) => readFile(join(work, 'certs', f), 'utf8')));
    const dispatcher = new Agent({ connect: { ca, cert, key: certKey } });
    try {
      const res = await tlsFetch(`${internalUrl}/internal/nodes`, { dispatcher, headers: { authorization: `Bearer ${signInternalToken(Buffer.from(key, 'hex'), API_AUDIENCE, 60_000)}` } });
      return ((await res.json()) as { nodes: Obj[] }).nodes.find((n) => n.id === 'k8s-host-2')?.state;
    } finally {
      await dispatcher.close();
    }
  };
  const hook = (action: string) => promisify(execFile)(process.execPath, [CLI, 'cluster', action, '--via-env'], { env: { ...process.env, ...nodeEnv } });

  test("the node's probes answer over HTTPS without a certificate; it registers through the internal listener with the shared node certificate", async () => {
    assert.equal(await probe(`${nodeUrl()}/healthz`), 200);
    await until('the node is registered and ready', async () => (await probe(`${nodeUrl()}/readyz`)) === 200);
    assert.equal(await probe(`${nodeUrl()}/info`), 401, 'everything else needs a certificate of the cluster CA');
    assert.equal(await nodeState(), 'ready');
    // The API replica's public port: plain HTTP, no internal routes.
    assert.equal((await fetch(`${api.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${api.url}/internal/nodes`)).status, 401);
  });

  test('the preStop drain and the postStart uncordon go through the internal listener with the node certificate', async () => {
    assert.match((await hook('drain')).stdout, /k8s-host-2: drain done/);
    assert.equal(await nodeState(), 'draining');
    await hook('uncordon');
    assert.equal(await nodeState(), 'ready');
  });

  test('a Secret update (certificates reissued with --ca-dir) is taken up by both without a restart', async () => {
    await certs(join(work, 'certs-2'), '--ca-dir', join(work, 'certs'), '--api-host', 'sandpit-api.sandpit.svc');
    const [apiWas, nodeWas] = [api.pid, node.pid];
    assert.ok(apiWas && nodeWas, 'both servers run under their reaper');
    await mountSecret('api', join(work, 'certs-2'), 2);
    await mountSecret('node', join(work, 'certs-2'), 2);
    const want = { api: await fingerprint(join(work, 'certs-2', 'api.crt')), node: await fingerprint(join(work, 'certs-2', 'node.crt')) };
    assert.notEqual(want.node, await fingerprint(join(work, 'certs', 'node.crt')));
    await until('the API replica presents its new certificate', async () => (await presented(Number(new URL(internalUrl).port))) === want.api, 15_000);
    await until('the node presents its new certificate', async () => (await presented(node.port)) === want.node, 15_000);
    assert.deepEqual([api.pid, node.pid], [apiWas, nodeWas]);
    assert.match((await hook('drain')).stdout, /k8s-host-2: drain done/);
    await hook('uncordon');
    assert.equal(await nodeState(), 'ready');
    assert.equal(await probe(`${nodeUrl()}/readyz`), 200);
  });
});
