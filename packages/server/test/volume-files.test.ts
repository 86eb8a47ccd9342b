import assert from 'node:assert/strict';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Api, ServerProcess } from './helpers/server-process.ts';

function assertEnvelope(res: { status: number; body: any }, status: number, code: string): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body?.error?.code, code, JSON.stringify(res.body));
}

describe('files of a volume without a sandbox', () => {
  let srv: ServerProcess;
  let api: Api;
  before(async () => {
    srv = await ServerProcess.start({ SANDPIT_DRIVER: 'container' });
    api = new Api(srv.url, srv.key);
  });
  after(async () => {
    for (const sb of (await api.get('/sandboxes?limit=1000')).body.sandboxes ?? []) await api.del(`/sandboxes/${sb.id}`);
    for (const v of (await api.get('/volumes?limit=1000')).body.volumes ?? []) await api.del(`/volumes/${v.id}`);
    await srv?.stop();
  });

  const put = (path: string, body: Uint8Array<ArrayBuffer> | string, vol = 'ds') =>
    fetch(`${srv.url}/volumes/${vol}/files?path=${encodeURIComponent(path)}`, {
      method: 'PUT',
      headers: { 'x-api-key': srv.key, 'content-type': 'application/octet-stream' },
      body: typeof body === 'string' ? body : new Blob([body]),
    });

  test('upload before any sandbox, list, download, a sandbox sees it, delete', async () => {
    const vol = (await api.post('/volumes', { name: 'ds', size_mib: 8 })).body;
    const up = await put('/set/a.txt', 'alpha');
    assert.equal(up.status, 201, await up.clone().text());
    assert.deepEqual({ ...(await up.json()), modified_at: 'x' }, { name: 'a.txt', path: '/set/a.txt', type: 'file', size: 5, modified_at: 'x' });
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    assert.equal((await put('set/big.bin', big)).status, 201);

    const list = await api.get('/volumes/ds/files/list?path=/set');
    assert.deepEqual(
      list.body.entries.map((e: any) => [e.name, e.type, e.size]),
      [
        ['a.txt', 'file', 5],
        ['big.bin', 'file', big.length],
      ],
    );
    assert.deepEqual(
      (await api.get('/volumes/ds/files/list?path=/')).body.entries.map((e: any) => e.name),
      ['set'],
    );
    const got = await fetch(`${srv.url}/volumes/ds/files?path=/set/big.bin`, { headers: { 'x-api-key': srv.key } });
    assert.equal(got.headers.get('content-length'), String(big.length));
    assert.ok(Buffer.from(await got.arrayBuffer()).equals(big));

    const sb = (await api.post('/sandboxes', { volumes: [{ volume: 'ds', path: '/data' }] })).body;
    const seen = await api.post(`/sandboxes/${sb.id}/exec`, { command: 'cat /data/set/a.txt; stat -c %U /data/set /data/set/a.txt; echo more > /data/set/a.txt' });
    assert.equal(seen.body.stdout, 'alphauser\nuser\n', "files the API wrote are the sandbox user's");
    assert.equal(await (await fetch(`${srv.url}/volumes/ds/files?path=set/a.txt`, { headers: { 'x-api-key': srv.key } })).text(), 'more\n');

    assert.equal((await api.del('/volumes/ds/files?path=/set/a.txt')).status, 204);
    assertEnvelope(await api.get('/volumes/ds/files?path=/set/a.txt'), 404, 'not_found');
    assertEnvelope(await api.del('/volumes/ds/files?path=/set'), 409, 'conflict');
    assert.equal((await api.del(`/sandboxes/${sb.id}`)).status, 204);
    assert.ok(vol.id);
  });

  test('a full volume answers 507 and keeps nothing', async () => {
    await api.post('/volumes', { name: 'small', size_mib: 2 });
    // Headers only, announcing more than fits: the server answers 507 before reading any body.
    const raw = await new Promise<string>((resolve, reject) => {
      const sock = connect(srv.port, '127.0.0.1', () => {
        sock.write(`PUT /volumes/small/files?path=/x.bin HTTP/1.1\r\nhost: x\r\nx-api-key: ${srv.key}\r\ncontent-type: application/octet-stream\r\ncontent-length: ${4 * 1024 * 1024}\r\n\r\n`);
      });
      let text = '';
      sock.on('data', (d) => {
        text += d;
        if (text.includes('}}')) {
          sock.destroy();
          resolve(text);
        }
      });
      sock.on('error', reject);
    });
    assert.match(raw, /^HTTP\/1\.1 507/);
    assert.match(raw, /"code":"insufficient_storage"/);
    assert.deepEqual((await api.get('/volumes/small/files/list?path=/')).body.entries, []);

    // Streamed without a length: the quota stops the write part way, and the answer is still 507.
    const chunk = Buffer.alloc(256 * 1024, 1);
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 16; i++) c.enqueue(chunk);
        c.close();
      },
    });
    const res = await fetch(`${srv.url}/volumes/small/files?path=/streamed.bin`, {
      method: 'PUT',
      headers: { 'x-api-key': srv.key, 'content-type': 'application/octet-stream' },
      body,
      duplex: 'half',
    } as RequestInit);
    const answer = await res.json();
    assert.equal(res.status, 507, JSON.stringify(answer));
    assert.equal(answer.error.code, 'insufficient_storage');
    assert.deepEqual((await api.get('/volumes/small/files/list?path=/')).body.entries, [], 'nothing is kept, not even the temporary file');
  });

  test('paths that leave the volume never reach the host', async () => {
    const vol = (await api.get('/volumes/ds')).body;
    const root = join(srv.dataDir, 'volumes', vol.id);
    // A file outside every volume, and symlinks a sandbox could have made pointing at it.
    await writeFile(join(srv.dataDir, 'outside.txt'), 'host secret');
    await symlink(join(srv.dataDir, 'outside.txt'), join(root, 'abs-link'));
    await symlink('../../outside.txt', join(root, 'rel-link'));
    await symlink(srv.dataDir, join(root, 'dir-link'));
    for (const path of ['../outside.txt', '/set/../../outside.txt']) assertEnvelope(await api.get(`/volumes/ds/files?path=${encodeURIComponent(path)}`), 400, 'bad_request');
    for (const path of ['abs-link', 'rel-link', 'dir-link/outside.txt']) assertEnvelope(await api.get(`/volumes/ds/files?path=${path}`), 400, 'bad_request');
    assertEnvelope(await api.get('/volumes/ds/files/list?path=dir-link'), 400, 'bad_request');
    assert.equal((await put('dir-link/new.txt', 'x')).status, 400);
    assert.equal((await put('dir-link/outside.txt', 'x')).status, 400);
    // Removing a symlink removes the link, not what it points to.
    assert.equal((await api.del('/volumes/ds/files?path=abs-link')).status, 204);
    // An upload onto a symlink replaces the link (rename), never writes where it points.
    assert.equal((await put('rel-link', 'replaced')).status, 201);
    assert.equal(await readFile(join(root, 'rel-link'), 'utf8'), 'replaced');
    assert.equal(await readFile(join(srv.dataDir, 'outside.txt'), 'utf8'), 'host secret');
  });
});
