import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { InternalChannel } from '../../server/src/cluster/internal-channel.ts';
import { CLI } from '../../server/test/helpers/server-process.ts';

/**
 * `sandpit cluster certs`: the cluster CA and the certificates of the roles api, node and operator for an
 * installation run outside `cluster up` (Kubernetes' Secret); a CA is never overwritten; `--ca-dir`
 * reissues from an existing one. The files are read back with node:crypto, not with the code that wrote them.
 */
const run = promisify(execFile);
const ROLES = ['api', 'node', 'operator'] as const;
let work: string;

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const read = (dir: string, file: string) => readFile(join(dir, file), 'utf8');
const cert = async (dir: string, file: string) => new X509Certificate(await read(dir, file));
const mode = async (path: string) => (await stat(path)).mode & 0o777;
/** `CN=api\nOU=api\nO=Sandpit` as { CN, OU, O }. */
const subject = (c: X509Certificate) => Object.fromEntries(c.subject.split('\n').map((l) => l.split('=') as [string, string]));
const sans = (c: X509Certificate) => c.subjectAltName?.split(', ') ?? [];
/** Every file of a directory and its contents. */
const snapshot = async (dir: string) => Object.fromEntries(await Promise.all((await readdir(dir)).sort().map(async (f) => [f, await read(dir, f)])));

/** Each member certificate: issued and signed by the CA of `caDir`, of its role, its key the one beside it. */
async function assertIssuedBy(dir: string, caDir: string): Promise<void> {
  const ca = await cert(caDir, 'ca.crt');
  for (const role of ROLES) {
    const c = await cert(dir, `${role}.crt`);
    assert.deepEqual(subject(c), { CN: role, OU: role, O: 'Sandpit' }, role);
    assert.equal(c.issuer, ca.subject, role);
    assert.ok(c.checkIssued(ca), `${role}: issued by the CA`);
    assert.ok(c.verify(ca.publicKey), `${role}: signed with the CA's key`);
    assert.equal(c.ca, false, role);
    assert.ok(c.checkPrivateKey(createPrivateKey(await read(dir, `${role}.key`))), `${role}: its key`);
    assert.ok(new Date(c.validTo).getTime() > Date.now() + 80 * 86_400_000, `${role}: valid for months`);
  }
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'sandpit-cluster-certs-'));
});

after(async () => {
  await rm(work, { recursive: true, force: true });
});

test('writes a CA and certificates of the roles api, node and operator, keys readable by their owner only', async () => {
  const out = join(work, 'certs');
  const res = await cli(['cluster', 'certs', '--out', out, '--api-host', 'sandpit-api.sandpit.svc', '--api-host', '10.96.0.10']);
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stdout, /kubectl .*create secret generic .*--from-file=\S*\/ca\.crt .*--from-file=\S*\/node\.key/);
  assert.deepEqual((await readdir(out)).sort(), ['api.crt', 'api.key', 'ca.crt', 'ca.key', 'node.crt', 'node.key', 'operator.crt', 'operator.key']);
  assert.equal(await mode(out), 0o700);
  for (const f of ['ca.key', 'api.key', 'node.key', 'operator.key']) assert.equal(await mode(join(out, f)), 0o600, f);
  for (const f of ['ca.crt', 'api.crt', 'node.crt', 'operator.crt']) assert.equal(await mode(join(out, f)), 0o644, f);

  const ca = await cert(out, 'ca.crt');
  assert.equal(ca.ca, true);
  assert.ok(ca.verify(ca.publicKey), 'the CA is self-signed');
  assert.ok(ca.checkPrivateKey(createPrivateKey(await read(out, 'ca.key'))));
  await assertIssuedBy(out, out);

  assert.deepEqual(sans(await cert(out, 'api.crt')), ['DNS:sandpit-api.sandpit.svc', 'IP Address:10.96.0.10', 'DNS:localhost', 'IP Address:127.0.0.1']);
  const node = await cert(out, 'node.crt');
  assert.deepEqual(sans(node), ['DNS:*.node.sandpit.internal', 'DNS:localhost', 'IP Address:127.0.0.1']);
  // One certificate for every node: the name curl asks for, `<node id>.node.sandpit.internal`, matches for any node id.
  for (const id of ['k8s-host-1', 'ip-10-0-3-7']) assert.equal(node.checkHost(`${id}.node.sandpit.internal`), '*.node.sandpit.internal', id);
  assert.equal(node.checkHost('sandpit-api.sandpit.svc'), undefined, 'nothing else');
  assert.deepEqual(sans(await cert(out, 'operator.crt')), ['DNS:localhost', 'IP Address:127.0.0.1']);
});

/** curl as a node fetching from node `nodeId` runs it (InternalChannel.curlTarget, the node's own files), against a server presenting `served`. */
async function curlFrom(dir: string, served: string, nodeId: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [ca, cert, key] = await Promise.all(['ca.crt', `${served}.crt`, `${served}.key`].map((f) => read(dir, f)));
  const server = createServer({ ca, cert, key, requestCert: true, rejectUnauthorized: true }, (req, res) => res.end(`hello ${(req.socket as TLSSocket).getPeerCertificate().subject.OU}`));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const channel = await InternalChannel.tls({ ca: join(dir, 'ca.crt'), cert: join(dir, 'node.crt'), key: join(dir, 'node.key') });
  try {
    const target = channel.curlTarget(new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}/part`), nodeId);
    assert.equal(new URL(target.url).hostname, `${nodeId}.node.sandpit.internal`);
    return await new Promise((resolve) => {
      const child = spawn('curl', ['-sS', '--fail', '-K', '-', target.url]);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(target.config.map((l) => `${l}\n`).join(''));
    });
  } finally {
    channel.close();
    await new Promise((r) => server.close(r));
  }
}

test("curl, as one node fetching from another, accepts the shared node certificate for any node's internal name", async () => {
  const dir = join(work, 'certs');
  for (const id of ['k8s-host-1', 'ip-10-0-3-7']) {
    const out = await curlFrom(dir, 'node', id);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, 'hello node', 'the server saw the node certificate as the client');
  }
  // curl does check the name: a certificate without it (the API's) is refused.
  const wrong = await curlFrom(dir, 'api', 'k8s-host-1');
  assert.notEqual(wrong.code, 0);
  assert.match(wrong.stderr, /k8s-host-1\.node\.sandpit\.internal/);
});

test('a directory holding a CA is refused, and nothing in it changes', async () => {
  const out = join(work, 'certs');
  const before = await snapshot(out);
  const res = await cli(['cluster', 'certs', '--out', out]);
  assert.equal(res.code, 1);
  assert.match(res.stderr, /already holds a cluster CA \(ca\.key\): not overwriting it; reissue from it with --ca-dir/);
  assert.deepEqual(await snapshot(out), before);
});

test('--ca-dir reissues member certificates from the same CA, in place or into another directory', async () => {
  const out = join(work, 'certs');
  const before = await snapshot(out);
  const inPlace = await cli(['cluster', 'certs', '--out', out, '--ca-dir', out, '--api-host', 'sandpit-api.sandpit.svc']);
  assert.equal(inPlace.code, 0, inPlace.stderr);
  const now = await snapshot(out);
  assert.equal(now['ca.key'], before['ca.key'], 'the CA stays');
  assert.equal(now['ca.crt'], before['ca.crt'], 'the CA stays');
  for (const f of ['api.crt', 'api.key', 'node.crt', 'node.key', 'operator.crt', 'operator.key']) assert.notEqual(now[f], before[f], `${f} is new`);
  await assertIssuedBy(out, out);
  assert.ok(sans(await cert(out, 'api.crt')).includes('DNS:sandpit-api.sandpit.svc'));
  for (const f of ['ca.key', 'api.key', 'node.key', 'operator.key']) assert.equal(await mode(join(out, f)), 0o600, f);

  // Into a directory of its own (the next Secret): the CA certificate, not its key.
  const next = join(work, 'certs-2');
  const elsewhere = await cli(['cluster', 'certs', '--out', next, '--ca-dir', out]);
  assert.equal(elsewhere.code, 0, elsewhere.stderr);
  assert.deepEqual((await readdir(next)).sort(), ['api.crt', 'api.key', 'ca.crt', 'node.crt', 'node.key', 'operator.crt', 'operator.key']);
  assert.equal(await read(next, 'ca.crt'), before['ca.crt']);
  await assertIssuedBy(next, out);
});

test("--ca-dir refuses a key that is not its CA's, and an --out holding another CA", async () => {
  const other = join(work, 'other');
  assert.equal((await cli(['cluster', 'certs', '--out', other])).code, 0);
  const mixed = join(work, 'mixed');
  await mkdir(mixed);
  await copyFile(join(work, 'certs', 'ca.crt'), join(mixed, 'ca.crt'));
  await copyFile(join(other, 'ca.key'), join(mixed, 'ca.key'));
  const wrongKey = await cli(['cluster', 'certs', '--out', join(work, 'unused'), '--ca-dir', mixed]);
  assert.equal(wrongKey.code, 1);
  assert.match(wrongKey.stderr, /ca\.key is not the key of ca\.crt/);

  const before = await snapshot(other);
  const otherCa = await cli(['cluster', 'certs', '--out', other, '--ca-dir', join(work, 'certs')]);
  assert.equal(otherCa.code, 1);
  assert.match(otherCa.stderr, /holds another CA's key/);
  assert.deepEqual(await snapshot(other), before);
});
