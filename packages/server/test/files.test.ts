import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { Api, parseSse, sandboxFixture } from './helpers/server-process.ts';

const fx = sandboxFixture();

const api = () => new Api(fx.server.url);
const get = (path: string) => api().get(path, fx.dp);
const post = (path: string, body: unknown) => api().post(path, body, fx.dp);
const sh = async (command: string) => (await api().post('/exec', { command, timeout_s: 120 }, fx.dp)).body;
const q = (p: string) => encodeURIComponent(p);

function upload(path: string, body: Buffer | Readable, headers: Record<string, string> = {}) {
  return fetch(`${fx.server.url}/files?path=${q(path)}`, {
    method: 'PUT',
    headers: { ...fx.dp, 'content-type': 'application/octet-stream', ...headers },
    body: body instanceof Readable ? (Readable.toWeb(body) as ReadableStream) : body,
    duplex: 'half',
  } as RequestInit);
}

/** Deterministic pseudo-random bytes, generated on the fly, hashed as they are produced. */
function generator(total: number) {
  const hash = createHash('sha256');
  let sent = 0;
  let seed = 0x12345678;
  const stream = new Readable({
    read() {
      if (sent >= total) return this.push(null);
      const n = Math.min(1 << 20, total - sent);
      const chunk = Buffer.allocUnsafe(n);
      for (let i = 0; i < n; i += 4) {
        seed = (seed * 1664525 + 1013904223) >>> 0;
        chunk.writeUInt32LE(seed, i);
      }
      hash.update(chunk);
      sent += n;
      this.push(chunk);
    },
  });
  return { stream, digest: () => hash.digest('hex') };
}

describe('upload and download', () => {
  test('300 MiB streams both ways with the same checksum, owned by user', async () => {
    const size = 300 * 1024 * 1024;
    const gen = generator(size);
    const up = await upload('big/blob.bin', gen.stream);
    const entry = (await up.json()) as any;
    assert.equal(up.status, 200, JSON.stringify(entry));
    assert.equal(entry.path, '/home/user/big/blob.bin');
    assert.equal(entry.size, size);
    assert.equal(entry.type, 'file');
    const want = gen.digest();
    const inside = await sh('sha256sum /home/user/big/blob.bin; test -O /home/user/big/blob.bin && echo owned');
    assert.equal(inside.stdout, `${want}  /home/user/big/blob.bin\nowned\n`);
    const down = await fetch(`${fx.server.url}/files?path=${q('/home/user/big/blob.bin')}`, { headers: fx.dp });
    assert.equal(down.status, 200);
    assert.equal(down.headers.get('content-type'), 'application/octet-stream');
    assert.equal(down.headers.get('content-length'), String(size));
    const hash = createHash('sha256');
    let got = 0;
    for await (const chunk of down.body as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      got += chunk.length;
    }
    assert.equal(got, size);
    assert.equal(hash.digest('hex'), want);
    await sh('rm -rf /home/user/big');
  });

  test('binary content round trips; replacing a file keeps its mode; empty files work', async () => {
    const bin = Buffer.from(Array.from({ length: 70000 }, (_, i) => (i * 7) % 256));
    assert.equal((await upload('/tmp/bin.dat', bin, { 'content-type': 'application/json' })).status, 200);
    const down = await fetch(`${fx.server.url}/files?path=/tmp/bin.dat`, { headers: fx.dp });
    assert.deepEqual(Buffer.from(await down.arrayBuffer()), bin);
    await sh('chmod 750 /tmp/bin.dat');
    assert.equal((await upload('/tmp/bin.dat', Buffer.from('new'))).status, 200);
    assert.equal((await sh('cat /tmp/bin.dat')).stdout, 'new');
    assert.equal((await get('/files/stat?path=/tmp/bin.dat')).body.permissions, 'rwxr-x---');
    const empty = await upload('/tmp/empty', Buffer.alloc(0));
    assert.equal(empty.status, 200);
    assert.equal(((await empty.json()) as any).size, 0);
    const d = await fetch(`${fx.server.url}/files?path=/tmp/empty`, { headers: fx.dp });
    assert.equal(d.status, 200);
    assert.equal((await d.arrayBuffer()).byteLength, 0);
  });

  test('errors: missing 404, directory 400, forbidden 403, bad paths 400, bad token 401', async () => {
    const missing = await get('/files?path=/no/such/file');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'not_found');
    const dir = await get('/files?path=/home/user');
    assert.equal(dir.status, 400);
    assert.equal(dir.body.error.code, 'bad_request');
    const shadow = await get('/files?path=/etc/shadow');
    assert.equal(shadow.status, 403);
    assert.equal(shadow.body.error.code, 'forbidden');
    const upDir = await upload('/home/user', Buffer.from('x'));
    assert.equal(upDir.status, 400);
    const upRoot = await upload('/etc/passwd', Buffer.from('x'));
    assert.equal(upRoot.status, 403);
    assert.equal(((await upRoot.json()) as any).error.code, 'forbidden');
    assert.equal((await sh('head -1 /etc/passwd')).stdout.startsWith('root:'), true);
    for (const p of ['', 'a%00b']) {
      const res = await api().get(`/files/stat?path=${p}`, fx.dp);
      assert.equal(res.status, 400, p);
      assert.equal(res.body.error.code, 'bad_request');
    }
    assert.equal((await api().get('/files/stat', fx.dp)).status, 400);
    const noToken = await api().get('/files/stat?path=/tmp', { 'x-platform-sandbox-id': fx.sb.id, 'x-access-token': 'wrong' });
    assert.equal(noToken.status, 401);
    const upNoToken = await fetch(`${fx.server.url}/files?path=/tmp/x`, { method: 'PUT', headers: { 'x-platform-sandbox-id': fx.sb.id }, body: 'x' });
    assert.equal(upNoToken.status, 401);
  });

  test('a full disk quota answers 507 and leaves nothing behind', async () => {
    // Fill the quota to within 32 MiB, so the 128 MiB upload below cannot fit.
    const fill = await sh('mkdir -p /home/user/filler && i=0; while fallocate -l 32M /home/user/filler/$i 2>/dev/null; do i=$((i+1)); done; echo $i');
    assert.ok(Number(fill.stdout) > 0, fill.stderr);
    try {
      const gen = generator(128 * 1024 * 1024);
      const res = await upload('/home/user/quota/too-big.bin', gen.stream).catch((err) => err as Error);
      if (res instanceof Error) assert.fail(`upload failed without a response: ${res.message}`);
      assert.equal(res.status, 507);
      assert.equal(((await res.json()) as any).error.code, 'insufficient_storage');
      assert.equal((await sh('ls -A /home/user/quota')).stdout, '');
      // Filled to the last block: a small file (written by the agent itself, not a helper) is refused the same way.
      await sh('for s in 4M 256K 16K 4K; do i=0; while fallocate -l $s /home/user/filler/$s-$i 2>/dev/null; do i=$((i+1)); done; done');
      const small = await upload('/home/user/quota/small.bin', Buffer.alloc(64 * 1024, 1));
      assert.equal(small.status, 507);
      assert.equal(((await small.json()) as any).error.code, 'insufficient_storage');
      assert.equal((await sh('ls -A /home/user/quota')).stdout, '');
    } finally {
      await sh('rm -rf /home/user/filler');
    }
    assert.equal((await upload('/home/user/quota/fits.bin', Buffer.alloc(1024))).status, 200);
  });
});

describe('directory operations', () => {
  test('mkdir (-p), stat, list, rename, remove', async () => {
    const mk = await post('/files/mkdir', { path: 'work/a/b' });
    assert.equal(mk.status, 200, JSON.stringify(mk.body));
    assert.equal(mk.body.type, 'dir');
    assert.equal(mk.body.path, '/home/user/work/a/b');
    assert.equal((await post('/files/mkdir', { path: 'work/a/b' })).status, 200);
    const again = await post('/files/mkdir', { path: 'work/a/b', parents: false });
    assert.equal(again.status, 409);
    assert.equal((await post('/files/mkdir', { path: 'work/x/y', parents: false })).status, 404);
    await upload('work/a/f.txt', Buffer.from('hello'));
    await sh('ln -s f.txt /home/user/work/a/link');
    const list = await get('/files/list?path=work/a');
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.entries.map((e: any) => [e.name, e.type, e.path]),
      [
        ['b', 'dir', '/home/user/work/a/b'],
        ['f.txt', 'file', '/home/user/work/a/f.txt'],
        ['link', 'symlink', '/home/user/work/a/link'],
      ],
    );
    const link = list.body.entries[2];
    assert.equal(link.symlink_target, 'f.txt');
    const st = await get('/files/stat?path=/home/user/work/a/f.txt');
    assert.equal(st.body.size, 5);
    assert.equal(st.body.permissions, 'rw-r--r--');
    assert.equal(st.body.mode, 0o644);
    assert.ok(Math.abs(Date.parse(st.body.modified_at) - Date.now()) < 60_000);
    assert.equal((await get('/files/list?path=work/a/f.txt')).status, 400);
    assert.equal((await get('/files/list?path=work/nope')).status, 404);

    const mv = await post('/files/rename', { from: 'work/a/f.txt', to: 'work/a/b/g.txt' });
    assert.equal(mv.status, 200);
    assert.equal(mv.body.path, '/home/user/work/a/b/g.txt');
    await upload('work/a/h.txt', Buffer.from('h'));
    const noOver = await post('/files/rename', { from: 'work/a/h.txt', to: 'work/a/b/g.txt', overwrite: false });
    assert.equal(noOver.status, 409);
    assert.equal((await post('/files/rename', { from: 'work/nope', to: 'work/x' })).status, 404);

    const notEmpty = await post('/files/remove', { path: 'work/a' });
    assert.equal(notEmpty.status, 409);
    assert.equal((await post('/files/remove', { path: 'work/a/h.txt' })).status, 204);
    assert.equal((await post('/files/remove', { path: 'work/a', recursive: true })).status, 204);
    assert.equal((await get('/files/stat?path=work/a')).status, 404);
    assert.equal((await post('/files/remove', { path: 'work/a' })).status, 404);
    assert.equal((await post('/files/remove', { path: '/etc', recursive: true })).status, 403);
    assert.equal((await post('/files/mkdir', { path: 'x\u0000y' })).status, 400);
  });
});

describe('watch', () => {
  test('SSE events for create, write, rename and remove; ends when the directory goes', async () => {
    await post('/files/mkdir', { path: '/home/user/watched/sub' });
    const ctrl = new AbortController();
    const res = await fetch(`${fx.server.url}/files/watch?path=/home/user/watched&recursive=true`, { headers: fx.dp, signal: ctrl.signal });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const text = res.text();
    // A tree moved in raises no event for what it holds: the watcher reports its entries as created.
    await sh(
      'mkdir -p /home/user/tree && echo c > /home/user/tree/inner.txt && cd /home/user/watched && echo a > one.txt && mv one.txt sub/two.txt && mkdir sub/deep && echo b > sub/deep/three.txt && mv /home/user/tree sub/moved && sleep 0.1 && cd / && rm -rf /home/user/watched',
    );
    const { events } = parseSse(await text);
    const seen = events.filter((e) => e.type).map((e) => `${e.type} ${e.path}`);
    for (const want of [
      'create /home/user/watched/one.txt',
      'write /home/user/watched/one.txt',
      'rename_from /home/user/watched/one.txt',
      'rename_to /home/user/watched/sub/two.txt',
      'create /home/user/watched/sub/deep',
      'create /home/user/watched/sub/deep/three.txt',
      'rename_to /home/user/watched/sub/moved',
      'create /home/user/watched/sub/moved/inner.txt',
      'remove /home/user/watched/sub/two.txt',
    ]) {
      assert.ok(seen.includes(want), `${want} missing from ${JSON.stringify(seen)}`);
    }
    assert.equal(events.at(-1).finished, true);
    const missing = await get('/files/watch?path=/no/such/dir');
    assert.equal(missing.status, 404);
    const file = await get('/files/watch?path=/etc/passwd');
    assert.equal(file.status, 400);
  });
});
