import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { packTree, treeManifest, unpackTree, verifyTree } from '../src/runtime/host/tree-transfer.ts';

/** How snapshots and paused sandboxes travel between nodes: a tar stream, checked file by file against the sender's manifest. */
let dir: string;
let src: string;

async function collect(r: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandpit-tree-'));
  src = join(dir, 'src');
  await mkdir(join(src, 'upper', 'home'), { recursive: true });
  await writeFile(join(src, 'upper', 'home', 'notes.txt'), 'kept\n');
  await writeFile(join(src, 'big'), Buffer.alloc(3 << 20, 7));
  // A sparse file (a checkpoint image has holes) and an overlay whiteout (a 0/0 character device) with its xattr.
  await writeFile(join(src, 'sparse'), '');
  await truncate(join(src, 'sparse'), 64 << 20);
  execFileSync('mknod', [join(src, 'upper', 'gone'), 'c', '0', '0']);
  execFileSync('python3', ['-c', 'import os,sys; os.setxattr(sys.argv[1], "trusted.overlay.opaque", b"y")', join(src, 'upper', 'home')]);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('a tree arrives whole: files, holes, whiteouts and trusted xattrs, and matches the manifest', async () => {
  const manifest = await treeManifest(src);
  assert.deepEqual(
    manifest.map((f) => f.path),
    ['big', 'sparse', 'upper/home/notes.txt'],
  );
  const dest = join(dir, 'whole');
  await mkdir(dest);
  await unpackTree(packTree(src), dest);
  await verifyTree(dest, manifest);
  assert.equal(await readFile(join(dest, 'upper', 'home', 'notes.txt'), 'utf8'), 'kept\n');
  assert.ok((await stat(join(dest, 'upper', 'gone'))).isCharacterDevice());
  const opaque = execFileSync('python3', ['-c', 'import os,sys; print(os.getxattr(sys.argv[1], "trusted.overlay.opaque").decode())', join(dest, 'upper', 'home')]);
  assert.equal(opaque.toString().trim(), 'y');
  const sparse = await stat(join(dest, 'sparse'));
  assert.equal(sparse.size, 64 << 20);
  assert.ok(sparse.blocks * 512 < 1 << 20, 'the hole stays a hole');
});

test('a changed, missing or extra file fails the check; a truncated stream fails the unpack', async () => {
  const manifest = await treeManifest(src);
  const dest = join(dir, 'checked');
  await mkdir(dest);
  await unpackTree(packTree(src), dest);
  await writeFile(join(dest, 'upper', 'home', 'notes.txt'), 'kepT\n');
  await assert.rejects(verifyTree(dest, manifest), /notes.txt differs/);
  await writeFile(join(dest, 'upper', 'home', 'notes.txt'), 'kept\n');
  await writeFile(join(dest, 'extra'), 'x');
  await assert.rejects(verifyTree(dest, manifest), /holds 4 files, the manifest 3/);
  await rm(join(dest, 'big'));
  await assert.rejects(verifyTree(dest, manifest), /holds extra, which the manifest does not/);

  const archive = await collect(packTree(src));
  const cut = join(dir, 'cut');
  await mkdir(cut);
  await assert.rejects(unpackTree(Readable.from([archive.subarray(0, 1 << 20)]), cut), /unpacking into .* failed/);
});

test('a tree that cannot be read errors the stream, so a receiver never takes it for whole', async () => {
  await assert.rejects(collect(packTree(join(dir, 'absent'))), /tar of .* failed/);
});
