import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { decodeSelection, encodeSelection, fetchTree, sendTree, stillMissing, transferScratch, treeManifest, verifyTree } from '../src/runtime/tree-transfer.ts';

/**
 * How snapshots and sandboxes travel between nodes: a tar stream over HTTP, sent through a FIFO and
 * fetched by curl straight into tar, its bytes hashed on both sides (BLAKE2b) unless the channel checks
 * them (TLS), the unpacked files checked against the sender's manifest.
 */
let dir: string;
let src: string;
/** The FIFOs' directory, as a node's data directory has it. */
let scratch: string;
let server: Server;
let base: string;
/** What the test server does with a request: `send` writes the tree at `root` as sendTree does, with a hook to change the bytes. */
let handle: (res: ServerResponse, req: IncomingMessage) => Promise<void>;
const sentDigests: string[] = [];

async function send(root: string, res: ServerResponse, tamper?: (chunk: Buffer) => Buffer): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/x-tar' });
  const out = tamper
    ? new Writable({
        write(chunk: Buffer, _e, cb) {
          res.write(tamper(Buffer.from(chunk)), cb);
        },
      })
    : res;
  try {
    sentDigests.push((await sendTree(root, out, { scratch, digest: true }))!);
    res.end();
  } catch {
    res.destroy();
  }
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandpit-tree-'));
  src = join(dir, 'src');
  scratch = await transferScratch(dir);
  await mkdir(join(src, 'upper', 'home'), { recursive: true });
  await writeFile(join(src, 'upper', 'home', 'notes.txt'), 'kept\n');
  await writeFile(join(src, 'big'), Buffer.alloc(3 << 20, 7));
  // A sparse file (a checkpoint image has holes) and an overlay whiteout (a 0/0 character device) with its xattr.
  await writeFile(join(src, 'sparse'), '');
  await truncate(join(src, 'sparse'), 64 << 20);
  execFileSync('mknod', [join(src, 'upper', 'gone'), 'c', '0', '0']);
  execFileSync('python3', ['-c', 'import os,sys; os.setxattr(sys.argv[1], "trusted.overlay.opaque", b"y")', join(src, 'upper', 'home')]);
  server = createServer((req, res) => {
    if (req.headers['x-test-token'] !== 'secret') {
      res.writeHead(401).end();
      return;
    }
    void handle(res, req);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/part`;
});

after(async () => {
  await new Promise((r) => server?.close(r));
  await rm(dir, { recursive: true, force: true });
});

async function fetchInto(name: string): Promise<{ dest: string; digest: string }> {
  const dest = join(dir, name);
  await mkdir(dest);
  return { dest, digest: (await fetchTree(base, { 'x-test-token': 'secret' }, dest, { scratch, digest: true }))! };
}

test('a tree arrives whole: files, holes, whiteouts and trusted xattrs; the digests of the bytes sent and received agree; it matches the manifest', async () => {
  handle = (res) => send(src, res);
  const manifest = await treeManifest(src);
  assert.deepEqual(
    manifest.map((f) => f.path),
    ['big', 'sparse', 'upper/home/notes.txt'],
  );
  const { dest, digest } = await fetchInto('whole');
  assert.match(digest, /^[0-9a-f]{128}$/);
  assert.equal(digest, sentDigests.at(-1));
  await verifyTree(dest, manifest);
  assert.equal(await readFile(join(dest, 'upper', 'home', 'notes.txt'), 'utf8'), 'kept\n');
  assert.ok((await stat(join(dest, 'upper', 'gone'))).isCharacterDevice());
  const opaque = execFileSync('python3', ['-c', 'import os,sys; print(os.getxattr(sys.argv[1], "trusted.overlay.opaque").decode())', join(dest, 'upper', 'home')]);
  assert.equal(opaque.toString().trim(), 'y');
  const sparse = await stat(join(dest, 'sparse'));
  assert.equal(sparse.size, 64 << 20);
  assert.ok(sparse.blocks * 512 < 1 << 20, 'the hole stays a hole');
});

test('without a digest (a copy over TLS, whose channel checks it), the tree arrives whole straight into tar and a cut transfer still fails', async () => {
  handle = async (res) => {
    res.writeHead(200, { 'content-type': 'application/x-tar' });
    assert.equal(await sendTree(src, res, { scratch, digest: false }), undefined);
    res.end();
  };
  const dest = join(dir, 'undigested');
  await mkdir(dest);
  assert.equal(await fetchTree(base, { 'x-test-token': 'secret' }, dest, { scratch, digest: false }), undefined);
  await verifyTree(dest, await treeManifest(src));
  assert.ok((await readFile(join(dest, 'big'))).equals(await readFile(join(src, 'big'))));
  assert.ok((await stat(join(dest, 'upper', 'gone'))).isCharacterDevice());
  handle = async (res) => {
    res.writeHead(200, { 'content-type': 'application/x-tar' });
    res.write(Buffer.alloc(1 << 20, 1));
    res.destroy();
  };
  await mkdir(join(dir, 'undigested-cut'));
  await assert.rejects(fetchTree(base, { 'x-test-token': 'secret' }, join(dir, 'undigested-cut'), { scratch, digest: false }), /failed \(exit code/);
});

test('bytes changed on the way give another digest; a changed, missing or extra file fails the manifest check', async () => {
  let flipped = false;
  handle = (res) =>
    send(src, res, (chunk) => {
      // One byte inside the 3 MiB file of sevens: the archive stays valid, only the digest can tell.
      const at = chunk.indexOf(Buffer.alloc(4096, 7));
      if (!flipped && at >= 0) {
        chunk[at + 100] = 8;
        flipped = true;
      }
      return chunk;
    });
  const { dest, digest } = await fetchInto('tampered');
  assert.ok(flipped);
  assert.notEqual(digest, sentDigests.at(-1));
  const manifest = await treeManifest(src);
  await verifyTree(dest, manifest);
  await writeFile(join(dest, 'upper', 'home', 'notes.txt'), 'kept!\n');
  await assert.rejects(verifyTree(dest, manifest), /notes.txt differs from the manifest in size/);
  await writeFile(join(dest, 'upper', 'home', 'notes.txt'), 'kept\n');
  await writeFile(join(dest, 'extra'), 'x');
  await assert.rejects(verifyTree(dest, manifest), /holds 4 files, the manifest 3/);
  await rm(join(dest, 'big'));
  await assert.rejects(verifyTree(dest, manifest), /holds extra, which the manifest does not/);
});

test('a transfer cut short fails the fetch; so does a tree the sender cannot read, and a refused request', async () => {
  handle = async (res) => {
    res.writeHead(200, { 'content-type': 'application/x-tar' });
    res.write(Buffer.alloc(1 << 20, 1));
    res.destroy();
  };
  await assert.rejects(fetchInto('cut'), /failed \(exit code/);
  handle = (res) => send(join(dir, 'absent'), res);
  await assert.rejects(fetchInto('unreadable'), /failed \(exit code/);
  await assert.rejects(fetchTree(base, { 'x-test-token': 'wrong' }, dir, { scratch, digest: true }), /401/);
});

test('a copy cut short resumes: the sender sends only the files the receiver lacks (with every directory and device node), and the tree arrives whole', async () => {
  const tree = join(dir, 'resumable');
  await mkdir(join(tree, 'd1', 'd2'), { recursive: true });
  for (const [name, byte] of [
    ['a', 1],
    ['b', 2],
    ['d1/c', 3],
    ['d1/d2/e', 4],
  ] as const)
    await writeFile(join(tree, name), Buffer.alloc(1 << 20, byte));
  await writeFile(join(tree, 'small'), 'tail\n');
  execFileSync('mknod', [join(tree, 'd1', 'gone'), 'c', '0', '0']);
  const manifest = await treeManifest(tree);
  assert.deepEqual(
    manifest.map((f) => f.path),
    ['a', 'b', 'd1/c', 'd1/d2/e', 'small'],
  );

  // The first attempt is cut after a megabyte and a half: some files whole, one half written, the rest absent.
  handle = async (res) => {
    res.writeHead(200, { 'content-type': 'application/x-tar' });
    let sent = 0;
    const cutting = new Writable({
      write(chunk: Buffer, _e, cb) {
        sent += chunk.length;
        if (sent <= 1.5 * (1 << 20)) return res.write(chunk, cb);
        res.destroy();
        cb(new Error('cut'));
      },
    });
    cutting.on('error', () => undefined);
    await sendTree(tree, cutting, { scratch, digest: true }).catch(() => undefined);
  };
  const dest = join(dir, 'resumed');
  await mkdir(dest);
  await assert.rejects(fetchTree(base, { 'x-test-token': 'secret' }, dest, { scratch, digest: true }), /failed \(exit code/);
  const missing = await stillMissing(dest, manifest);
  assert.ok(missing.includes(false) && missing.includes(true), `some files whole, some not: ${JSON.stringify(missing)}`);

  // The second asks for the rest; the sender sends that alone.
  let resumedBytes = 0;
  handle = async (res, req) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString()) as { select: string; files: number };
    res.writeHead(200, { 'content-type': 'application/x-tar' });
    const counted = new Writable({
      write(chunk: Buffer, _e, cb) {
        resumedBytes += chunk.length;
        res.write(chunk, cb);
      },
    });
    sentDigests.push((await sendTree(tree, counted, { scratch, digest: true, select: decodeSelection(body.select, body.files) }))!);
    res.end();
  };
  const digest = await fetchTree(base, { 'x-test-token': 'secret' }, dest, { scratch, digest: true, body: { select: encodeSelection(missing), files: missing.length } });
  assert.equal(digest, sentDigests.at(-1), "the resumed attempt's bytes are checked by their own digest");
  const whole = missing.filter((m) => !m).length;
  assert.ok(resumedBytes < (5 - whole) * (1 << 20) + (512 << 10), `only what was missing was sent again (${resumedBytes} bytes)`);
  await verifyTree(dest, manifest);
  assert.deepEqual(await stillMissing(dest, manifest), [false, false, false, false, false]);
  for (const f of manifest) assert.ok((await readFile(join(dest, f.path))).equals(await readFile(join(tree, f.path))), `${f.path} is whole`);
  assert.ok((await stat(join(dest, 'd1', 'gone'))).isCharacterDevice(), 'a device node of a resumed copy arrives too');
  assert.throws(() => decodeSelection(encodeSelection([true, false]), 9), /a selection of 9 files is 2 bytes, got 1/);
});

test("the FIFOs stay in the node's data directory: none is left after transfers whole, cut or resumed, and one a killed node left is cleared at its next start", async () => {
  assert.deepEqual(await readdir(scratch), [], 'every transfer above removed its FIFO');
  // What a node killed mid-transfer leaves: its FIFO's directory.
  await mkdir(join(scratch, 'fifo-left'));
  execFileSync('mkfifo', [join(scratch, 'fifo-left', 'tar')]);
  assert.equal(await transferScratch(dir), scratch);
  assert.deepEqual(await readdir(scratch), []);
});
