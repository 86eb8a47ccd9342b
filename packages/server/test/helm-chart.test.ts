import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { DaemonSet, Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { Secret, Service } from 'kubernetes-models/v1';
import { createDatabase, PostgresCluster } from './helpers/postgres.ts';
import { CLI, ServerProcess } from './helpers/server-process.ts';
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

describe('the chart', () => {
  const external = render({ clusterKey: CLUSTER_KEY, database: { url: 'postgres://u:p@db.example:5432/sandpit' } });

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
    assert.match(env(c, 'SANDPIT_API_URL').value, /^http:\/\/sandpit-api\.sandpit\.svc:80$/);
    assert.equal(env(c, 'SANDPIT_NODE_URL').value, 'http://$(HOST_IP):3100');
    assert.equal(env(c, 'HOST_IP').valueFrom.fieldRef.fieldPath, 'status.hostIP');
    const preStop = c.lifecycle.preStop.exec.command.join(' ');
    assert.match(preStop, /sandpit cluster drain --via-env/);
    assert.match(c.lifecycle.postStart.exec.command.join(' '), /sandpit cluster uncordon --via-env/);
    assert.ok(spec.terminationGracePeriodSeconds >= 3600, 'time for the drain');
    const data = c.volumeMounts.find((m: Obj) => m.name === 'data');
    assert.equal(data.mountPath, '/var/lib/sandpit');
    assert.equal(spec.volumes.find((v: Obj) => v.name === 'data').hostPath.path, '/var/lib/sandpit');
  });

  test('probes name the health paths on named ports of their container', () => {
    for (const o of [one(external, 'Deployment', 'api'), one(external, 'DaemonSet', 'node')]) {
      const c = o.spec.template.spec.containers[0];
      assert.equal(c.readinessProbe.httpGet.path, '/readyz');
      assert.equal(c.livenessProbe.httpGet.path, '/healthz');
      for (const p of [c.readinessProbe, c.livenessProbe]) assert.ok(c.ports.some((port: Obj) => port.name === p.httpGet.port));
    }
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
    const trial = render({ clusterKey: CLUSTER_KEY, bundledPostgres: { enabled: true, password: 'trial1' } });
    const pg = one(trial, 'StatefulSet', 'postgres');
    const svc = one(trial, 'Service', 'postgres');
    assert.equal(pg.spec.replicas, 1);
    const secret = trial.find((o) => o.kind === 'Secret')!;
    assert.equal(secret.stringData['database-url'], `postgres://sandpit:trial1@${svc.metadata.name}:5432/sandpit`);
    assert.equal(env(pg.spec.template.spec.containers[0], 'POSTGRES_PASSWORD').valueFrom.secretKeyRef.key, 'postgres-password');
  });

  test('an existing Secret replaces the chart-made one; a missing key or database is refused', () => {
    const objs = render({ existingSecret: 'mine', database: { url: 'postgres://x' } });
    assert.equal(objs.filter((o) => o.kind === 'Secret').length, 0);
    assert.equal(env(one(objs, 'DaemonSet', 'node').spec.template.spec.containers[0], 'SANDPIT_CLUSTER_KEY').valueFrom.secretKeyRef.name, 'mine');
    assert.throws(() => render({ database: { url: 'postgres://x' } }), /clusterKey is required/);
    assert.throws(() => render({ clusterKey: CLUSTER_KEY }), /database.url is required/);
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
