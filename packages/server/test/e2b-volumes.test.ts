import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { AuthenticationError, Sandbox, Volume, VolumeError, VolumeFileType, VolumeNotFoundError, VolumePathNotFoundError } from 'e2b';
import { Api, CLI, freePort, ServerProcess } from './helpers/server-process.ts';

/**
 * E2B's Volume API, from the unmodified `e2b` package, against Sandpit's E2B port on the crun engine:
 * the control plane (E2B_API_URL) and the volume content API (E2B_VOLUME_API_URL, the same port).
 */
let server: ServerProcess;
let api: Api;
let e2bUrl: string;
/** SANDPIT_E2B_DOMAIN: where the SDK reaches the E2B port over HTTPS (a TLS front the domain test runs). */
const E2B_DOMAIN = 'sandpit-e2b.test:8443';

before(async () => {
  const port = await freePort();
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_E2B_PORT: String(port), SANDPIT_E2B_DOMAIN: E2B_DOMAIN });
  api = new Api(server.url, server.key);
  e2bUrl = `http://127.0.0.1:${port}`;
  process.env.E2B_API_URL = e2bUrl;
  process.env.E2B_SANDBOX_URL = e2bUrl;
  process.env.E2B_VOLUME_API_URL = e2bUrl;
  process.env.E2B_API_KEY = server.key;
});
after(async () => {
  for (const sb of (await api?.get('/sandboxes?limit=1000'))?.body.sandboxes ?? []) await api.del(`/sandboxes/${sb.id}`);
  for (const v of (await api?.get('/volumes?limit=1000'))?.body.volumes ?? []) await api.del(`/volumes/${v.id}`);
  await server?.stop();
});

const text = (s: ReadableStream<Uint8Array>) => new Response(s).text();

test('control plane: create, list, getInfo, connect by id and by name, destroy', async () => {
  const vol = await Volume.create('e2b-crud');
  assert.match(vol.volumeId, /^[0-9a-f-]{36}$/);
  assert.equal(vol.name, 'e2b-crud');
  assert.ok(vol.token.startsWith('spvol_'));
  // Sandpit's own API sees the same volume, with E2B's default quota.
  assert.equal((await api.get(`/volumes/${vol.volumeId}`)).body.name, 'e2b-crud');

  assert.ok((await Volume.list()).some((v) => v.volumeId === vol.volumeId && v.name === 'e2b-crud'));
  const info = await Volume.getInfo(vol.volumeId);
  assert.deepEqual([info.volumeId, info.name, info.token], [vol.volumeId, 'e2b-crud', vol.token]);
  assert.deepEqual([vol.domain, info.domain], [E2B_DOMAIN, E2B_DOMAIN]);

  await vol.writeFile('/hello.txt', 'from create');
  const byId = await Volume.connect(vol.volumeId);
  assert.equal(await byId.readFile('/hello.txt'), 'from create');
  // By name: Sandpit resolves `{volumeID}` as id or name on both APIs.
  const byName = await Volume.connect('e2b-crud');
  assert.equal((await Volume.getInfo('e2b-crud')).volumeId, vol.volumeId);
  assert.equal(await byName.readFile('hello.txt'), 'from create');

  await assert.rejects(Volume.create('e2b-crud'), (e: unknown) => e instanceof VolumeError && /409/.test(e.message));
  await assert.rejects(Volume.create('no spaces allowed'), (e: unknown) => e instanceof VolumeError && /400/.test(e.message));
  assert.ok(!(await Volume.list()).some((v) => v.name === 'no spaces allowed'), 'a refused create makes nothing');

  assert.equal(await Volume.destroy(vol.volumeId), true);
  assert.equal(await Volume.destroy(vol.volumeId), false);
  await assert.rejects(Volume.getInfo(vol.volumeId), VolumeNotFoundError);
  await assert.rejects(Volume.connect('e2b-crud'), VolumeNotFoundError);
  // The token of a deleted volume opens nothing.
  await assert.rejects(vol.readFile('/hello.txt'), VolumePathNotFoundError);
  assert.ok(!(await Volume.list()).some((v) => v.volumeId === vol.volumeId));
});

test('without E2B_VOLUME_API_URL the SDK reaches the volume content API at https://api.<SANDPIT_E2B_DOMAIN>', async () => {
  const vol = await Volume.create('e2b-domain');
  // A TLS front for the E2B port, as a deployment would put at api.<domain>, with a certificate made here.
  const dir = mkdtempSync(join(tmpdir(), 'e2b-domain-'));
  const host = `api.${E2B_DOMAIN.split(':')[0]}`;
  const cert = spawnSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    `/CN=${host}`,
    '-addext',
    `subjectAltName=DNS:${host}`,
    '-keyout',
    `${dir}/key.pem`,
    '-out',
    `${dir}/cert.pem`,
  ]);
  assert.equal(cert.status, 0, String(cert.stderr));
  const front = createTlsServer({ key: readFileSync(`${dir}/key.pem`), cert: readFileSync(`${dir}/cert.pem`) }, (tlsSocket) => {
    const upstream = connect(Number(new URL(e2bUrl).port), '127.0.0.1');
    tlsSocket.pipe(upstream).pipe(tlsSocket);
    upstream.on('error', () => tlsSocket.destroy());
    tlsSocket.on('error', () => upstream.destroy());
  });
  // The SDK's `proxy` option stands in for DNS: this loopback proxy records where the SDK tunnels to and hands that to the front.
  const tunnels: string[] = [];
  const proxy = createServer();
  proxy.on('connect', (req, socket: Socket) => {
    tunnels.push(req.url ?? '');
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    front.emit('connection', socket);
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  const viaProxy = { proxy: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` };
  // The server's domain wins over the client's own E2B_DOMAIN, as E2B's does for BYOC clusters.
  const saved = { url: process.env.E2B_VOLUME_API_URL, domain: process.env.E2B_DOMAIN, tls: process.env.NODE_TLS_REJECT_UNAUTHORIZED };
  delete process.env.E2B_VOLUME_API_URL;
  process.env.E2B_DOMAIN = 'client-default.test';
  // The certificate made above is trusted by no CA.
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  try {
    const connected = await Volume.connect(vol.volumeId);
    assert.equal(connected.domain, E2B_DOMAIN);
    assert.equal((await vol.writeFile('/via-domain.txt', 'over TLS', viaProxy)).size, 8);
    assert.equal(await connected.readFile('/via-domain.txt', viaProxy), 'over TLS');
    assert.ok(tunnels.length >= 1);
    assert.deepEqual([...new Set(tunnels)], [`api.${E2B_DOMAIN}`]);
  } finally {
    proxy.close();
    front.close();
    rmSync(dir, { recursive: true, force: true });
    for (const [name, value] of [
      ['E2B_VOLUME_API_URL', saved.url],
      ['E2B_DOMAIN', saved.domain],
      ['NODE_TLS_REJECT_UNAUTHORIZED', saved.tls],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
  assert.equal(await vol.readFile('/via-domain.txt'), 'over TLS', 'the file is in the volume');
  assert.equal(await Volume.destroy(vol.volumeId), true);
});

describe('volume content API', () => {
  let vol: Volume;
  before(async () => {
    vol = await Volume.create('e2b-files');
  });
  after(async () => {
    await Volume.destroy(vol.volumeId);
  });

  test('writeFile and readFile in every format', async () => {
    const stat = await vol.writeFile('/docs/a.txt', 'alpha');
    assert.deepEqual([stat.name, stat.path, stat.type, stat.size], ['a.txt', '/docs/a.txt', VolumeFileType.FILE, 5]);
    assert.ok(stat.mtime instanceof Date && stat.atime instanceof Date && stat.ctime instanceof Date);
    assert.deepEqual([stat.uid, stat.gid], [1000, 1000]);
    assert.equal(await vol.readFile('/docs/a.txt'), 'alpha');
    assert.equal(await vol.readFile('docs/a.txt', { format: 'text' }), 'alpha');

    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    await vol.writeFile('/bin.dat', bytes.buffer);
    assert.deepEqual([...(await vol.readFile('/bin.dat', { format: 'bytes' }))], [...bytes]);
    await vol.writeFile('/blob.txt', new Blob(['from a blob']));
    assert.equal(await (await vol.readFile('/blob.txt', { format: 'blob' })).text(), 'from a blob');
    const streamed = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('streamed '));
        c.enqueue(new TextEncoder().encode('upload'));
        c.close();
      },
    });
    await vol.writeFile('/stream.txt', streamed);
    assert.equal(await text(await vol.readFile('/stream.txt', { format: 'stream' })), 'streamed upload');

    // Writing onto a file that exists is refused (409) and changes nothing, unless `force`.
    for (const force of [undefined, false]) {
      await assert.rejects(vol.writeFile('/docs/a.txt', 'not written', { force }), (e: unknown) => e instanceof VolumeError && /409/.test(e.message));
    }
    await assert.rejects(vol.writeFile('/docs', 'not written'), (e: unknown) => e instanceof VolumeError && /409/.test(e.message));
    await assert.rejects(vol.writeFile('/docs', 'not written', { force: true }), (e: unknown) => e instanceof VolumeError && /400/.test(e.message));
    assert.equal(await vol.readFile('/docs/a.txt'), 'alpha');
    assert.deepEqual(
      (await vol.list('/docs')).map((e) => e.name),
      ['a.txt'],
      'a refused write leaves no temporary file behind',
    );

    // With `force` it replaces the content; uid, gid and mode apply to the file written.
    const again = await vol.writeFile('/docs/a.txt', 'alpha 2', { force: true, mode: 0o600, uid: 1234, gid: 4321 });
    assert.deepEqual([again.size, again.mode, again.uid, again.gid], [7, 0o600, 1234, 4321]);
    assert.equal(await vol.readFile('/docs/a.txt'), 'alpha 2');
    await vol.writeFile('/empty.txt', '');
    assert.equal(await vol.readFile('/empty.txt'), '');

    await assert.rejects(vol.readFile('/missing.txt'), VolumePathNotFoundError);
    await assert.rejects(vol.readFile('/missing.txt', { format: 'stream' }), VolumePathNotFoundError);
  });

  test('makeDir, list with depth, getInfo, exists, updateMetadata, remove', async () => {
    const dir = await vol.makeDir('/tree');
    assert.deepEqual([dir.name, dir.path, dir.type], ['tree', '/tree', VolumeFileType.DIRECTORY]);
    await assert.rejects(vol.makeDir('/tree'), (e: unknown) => e instanceof VolumeError && /409/.test(e.message));
    assert.equal((await vol.makeDir('/tree', { force: true })).type, VolumeFileType.DIRECTORY);
    await assert.rejects(vol.makeDir('/nowhere/deep'), VolumePathNotFoundError);
    const deep = await vol.makeDir('/tree/x/y', { force: true, mode: 0o700 });
    assert.deepEqual([deep.path, deep.mode], ['/tree/x/y', 0o700]);
    await vol.writeFile('/tree/x/y/leaf.txt', 'leaf');
    await vol.writeFile('/tree/top.txt', 'top');

    assert.deepEqual(
      (await vol.list('/tree')).map((e) => [e.path, e.type]),
      [
        ['/tree/top.txt', VolumeFileType.FILE],
        ['/tree/x', VolumeFileType.DIRECTORY],
      ],
    );
    assert.deepEqual((await vol.list('/tree', { depth: 3 })).map((e) => e.path).sort(), ['/tree/top.txt', '/tree/x', '/tree/x/y', '/tree/x/y/leaf.txt']);
    assert.ok((await vol.list('/')).some((e) => e.path === '/tree'));
    await assert.rejects(vol.list('/no-such-dir'), VolumePathNotFoundError);

    const info = await vol.getInfo('/tree/top.txt');
    assert.deepEqual([info.name, info.type, info.size], ['top.txt', VolumeFileType.FILE, 3]);
    assert.equal((await vol.getInfo('/')).type, VolumeFileType.DIRECTORY);
    await assert.rejects(vol.getInfo('/tree/none'), VolumePathNotFoundError);
    assert.equal(await vol.exists('/tree/top.txt'), true);
    assert.equal(await vol.exists('/tree/none'), false);

    const changed = await vol.updateMetadata('/tree/top.txt', { mode: 0o640, uid: 2000, gid: 3000 });
    assert.deepEqual([changed.mode, changed.uid, changed.gid], [0o640, 2000, 3000]);
    assert.deepEqual([(await vol.getInfo('/tree/top.txt')).mode], [0o640]);
    await assert.rejects(vol.updateMetadata('/tree/none', { mode: 0o600 }), VolumePathNotFoundError);

    await vol.remove('/tree/top.txt');
    assert.equal(await vol.exists('/tree/top.txt'), false);
    // A directory goes with everything in it.
    await vol.remove('/tree');
    assert.equal(await vol.exists('/tree'), false);
    await assert.rejects(vol.remove('/tree'), VolumePathNotFoundError);
  });

  test('paths that would leave the volume are refused and change nothing', async () => {
    for (const path of ['../outside.txt', '/a/../../outside.txt']) {
      await assert.rejects(vol.writeFile(path, 'x'), (e: unknown) => e instanceof VolumeError && /400/.test(e.message));
      await assert.rejects(vol.readFile(path), (e: unknown) => e instanceof VolumeError && /400/.test(e.message));
    }
    await assert.rejects(vol.readFile('/../../../../etc/passwd'), (e: unknown) => e instanceof VolumeError && !(e instanceof VolumePathNotFoundError));
    assert.ok(!(await vol.list('/')).some((e) => e.name.includes('outside')));
  });
});

test('another team: its volumes are not found and tokens open only their own volume', async () => {
  const vol = await Volume.create('e2b-private');
  await vol.writeFile('/secret.txt', 'mine');
  const cli = spawnSync(process.execPath, [CLI, 'team', 'create', 'e2b-vol-other', '--json'], {
    env: { ...process.env, SANDPIT_DATA_DIR: server.dataDir, SANDPIT_DATABASE_URL: server.env.SANDPIT_DATABASE_URL ?? '' },
    encoding: 'utf8',
  });
  assert.equal(cli.status, 0, cli.stderr);
  const otherKey = JSON.parse(cli.stdout).api_key as string;
  const other = { apiKey: otherKey };

  await assert.rejects(Volume.getInfo(vol.volumeId, other), VolumeNotFoundError);
  await assert.rejects(Volume.connect('e2b-private', other), VolumeNotFoundError);
  assert.equal(await Volume.destroy(vol.volumeId, other), false);
  assert.deepEqual(await Volume.list(other), []);

  // The other team's token, for its own volume, does not open this one; nor does a made-up token.
  const theirs = await Volume.create('e2b-theirs', other);
  await assert.rejects(new Volume(vol.volumeId, 'x', theirs.token).readFile('/secret.txt'), AuthenticationError);
  await assert.rejects(new Volume('e2b-private', 'x', theirs.token).readFile('/secret.txt'), AuthenticationError);
  await assert.rejects(new Volume(vol.volumeId, 'x', `${vol.token.slice(0, -4)}AAAA`).readFile('/secret.txt'), AuthenticationError);
  await assert.rejects(new Volume(vol.volumeId, 'x', theirs.token).writeFile('/secret.txt', 'overwritten'), AuthenticationError);
  assert.equal(await vol.readFile('/secret.txt'), 'mine');

  assert.equal(await Volume.destroy(theirs.volumeId, other), true);
  assert.equal(await Volume.destroy(vol.volumeId), true);
});

test("a token has its key's rights and ends with the key", async () => {
  const vol = await Volume.create('e2b-keyed');
  await vol.writeFile('/f.txt', 'kept');
  const made = await api.post('/api-keys', { name: 'volume-reader', permissions: ['sandboxes:read'] });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const reader = await Volume.connect(vol.volumeId, { apiKey: made.body.key });
  assert.equal(await reader.readFile('/f.txt'), 'kept');
  await assert.rejects(reader.writeFile('/f.txt', 'changed'), (e: unknown) => e instanceof VolumeError && /403/.test(e.message));
  await assert.rejects(reader.remove('/f.txt'), (e: unknown) => e instanceof VolumeError && /403/.test(e.message));
  await assert.rejects(Volume.destroy(vol.volumeId, { apiKey: made.body.key }), (e: unknown) => e instanceof VolumeError && /403/.test(e.message));
  assert.equal(await vol.readFile('/f.txt'), 'kept', 'refused calls change nothing');

  assert.equal((await api.del(`/api-keys/${made.body.id}`)).status, 204);
  await assert.rejects(reader.readFile('/f.txt'), AuthenticationError);
  assert.equal(await Volume.destroy(vol.volumeId), true);
});

test('a sandbox created through the SDK mounts the volume; destroy is refused while it does', async () => {
  const vol = await Volume.create('e2b-mounted');
  await vol.writeFile('/greeting.txt', 'hello from Volume');
  const sbx = await Sandbox.create({ volumeMounts: { '/mnt/data': vol }, timeoutMs: 120_000 });
  try {
    assert.equal((await sbx.commands.run('cat /mnt/data/greeting.txt')).stdout, 'hello from Volume');
    assert.deepEqual((await sbx.getInfo()).volumeMounts, [{ name: 'e2b-mounted', path: '/mnt/data' }]);
    await sbx.commands.run('echo written inside > /mnt/data/inside.txt && ln -s /etc /mnt/data/etc-link');
    assert.equal(await vol.readFile('/inside.txt'), 'written inside\n');

    // A symlink the sandbox made is reported, never followed out of the volume.
    const link = await vol.getInfo('/etc-link');
    assert.deepEqual([link.type, link.target], [VolumeFileType.SYMLINK, '/etc']);
    await assert.rejects(vol.readFile('/etc-link/hostname'), (e: unknown) => e instanceof VolumeError && /400/.test(e.message));
    await assert.rejects(vol.updateMetadata('/etc-link', { mode: 0o777 }), (e: unknown) => e instanceof VolumeError && /400/.test(e.message));
    await vol.remove('/etc-link');
    assert.equal((await sbx.commands.run('ls -d /etc')).exitCode, 0);

    // Mounted by name works as well; a volume that does not exist makes no sandbox.
    const byName = await Sandbox.create({ volumeMounts: { '/data': 'e2b-mounted' }, timeoutMs: 120_000 });
    try {
      assert.equal((await byName.commands.run('cat /data/inside.txt')).stdout, 'written inside\n');
      // Lists report each sandbox's own mounts: the SDK's (GET /v2/sandboxes) and E2B's older GET /sandboxes.
      const want = new Map([
        [sbx.sandboxId, [{ name: 'e2b-mounted', path: '/mnt/data' }]],
        [byName.sandboxId, [{ name: 'e2b-mounted', path: '/data' }]],
      ]);
      const listed = await Sandbox.list({ limit: 100 }).nextItems();
      const v1 = await fetch(`${e2bUrl}/sandboxes`, { headers: { 'X-API-KEY': server.key } });
      assert.equal(v1.status, 200);
      const listedV1 = (await v1.json()) as { sandboxID: string; volumeMounts: unknown }[];
      for (const [id, mounts] of want) {
        assert.deepEqual(listed.find((s) => s.sandboxId === id)?.volumeMounts, mounts);
        assert.deepEqual(listedV1.find((s) => s.sandboxID === id)?.volumeMounts, mounts);
      }
      assert.deepEqual((await byName.getInfo()).volumeMounts, want.get(byName.sandboxId));
    } finally {
      await byName.kill();
    }
    const before = (await api.get('/sandboxes?limit=1000')).body.sandboxes.length;
    await assert.rejects(Sandbox.create({ volumeMounts: { '/data': 'e2b-no-such-volume' } }));
    await assert.rejects(Sandbox.create({ volumeMounts: { 'relative/path': vol } }));
    assert.equal((await api.get('/sandboxes?limit=1000')).body.sandboxes.length, before);

    await assert.rejects(Volume.destroy(vol.volumeId), (e: unknown) => e instanceof VolumeError && /409/.test(e.message));
    assert.equal(await vol.readFile('/greeting.txt'), 'hello from Volume', 'a refused destroy deletes nothing');
  } finally {
    await sbx.kill();
  }
  assert.equal(await Volume.destroy(vol.volumeId), true);
});

test('volume calls are recorded in the audit log', async () => {
  const vol = await Volume.create('e2b-audited');
  await vol.writeFile('/f.txt', 'x');
  await vol.makeDir('/d');
  await vol.updateMetadata('/f.txt', { mode: 0o600 });
  await vol.remove('/d');
  await Volume.destroy(vol.volumeId);
  // Entries are recorded once each answer is sent: wait until the last one is in.
  const volumeEntries = async () => (await api.get('/audit-log?limit=100')).body.entries.filter((e: any) => e.resource.type === 'volume' && e.resource.id === vol.volumeId);
  let entries = await volumeEntries();
  for (let i = 0; i < 100 && !entries.some((e: any) => e.action === 'volume.delete'); i++) {
    await new Promise((r) => setTimeout(r, 100));
    entries = await volumeEntries();
  }
  assert.deepEqual(entries.map((e: any) => [e.action, e.request.route, e.status]).reverse(), [
    ['volume.create', 'e2b /volumes', 201],
    ['volume.file.write', 'e2b /volumecontent/:volumeID/file', 201],
    ['volume.file.mkdir', 'e2b /volumecontent/:volumeID/dir', 201],
    ['volume.file.update', 'e2b /volumecontent/:volumeID/path', 200],
    ['volume.file.remove', 'e2b /volumecontent/:volumeID/path', 204],
    ['volume.delete', 'e2b /volumes/:volumeID', 204],
  ]);
});
