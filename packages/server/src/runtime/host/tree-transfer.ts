import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** A regular file of a tree: its path relative to the root, size and sha256 (hex). */
export interface TreeFile {
  path: string;
  size: number;
  sha256: string;
}

/**
 * Every regular file under `root` with its size and sha256, sorted by path: what the receiver checks
 * an unpacked copy against. Directories, links and device nodes (overlay whiteouts) travel in the
 * archive; only file contents are worth a checksum.
 */
export async function treeManifest(root: string): Promise<TreeFile[]> {
  const out: TreeFile[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out.push({ path: p, size: (await lstat(join(root, p))).size, sha256: await fileSha256(join(root, p)) });
    }
  };
  await walk('');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(path), h);
  return h.digest('hex');
}

/** Options that keep what a sandbox's files need: owners by number, modes, xattrs (overlay's trusted.*), holes. */
const TAR_KEEP = ['--numeric-owner', '--xattrs', '--xattrs-include=*', '--sparse'];

/**
 * `root` as a tar stream, read as it is sent (never buffered whole). The stream ends only once tar
 * has exited cleanly and errors otherwise, so a receiver never takes a cut archive for a whole one;
 * a reader that stops early stops tar.
 */
export function packTree(root: string): Readable {
  const tar = spawn('tar', ['-c', ...TAR_KEEP, '-C', root, '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = new PassThrough();
  let err = '';
  tar.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  tar.stdout.pipe(out, { end: false });
  tar.on('error', (e) => out.destroy(e));
  tar.on('close', (code) => {
    if (code === 0) out.end();
    else out.destroy(new Error(`tar of ${root} failed (exit code ${code}): ${err.trim()}`));
  });
  out.on('close', () => {
    if (tar.exitCode === null) tar.kill();
  });
  return out;
}

/**
 * Unpacks a tar stream (from packTree) into the existing directory `dest`. tar reads to the end of the
 * stream (`--ignore-zeros`), past the end-of-archive blocks: it would otherwise exit there and close the
 * pipe while the sender's padding is still being written. A truncated stream still fails it.
 */
export async function unpackTree(src: Readable, dest: string): Promise<void> {
  const tar = spawn('tar', ['-x', ...TAR_KEEP, '--same-permissions', '--ignore-zeros', '-C', dest], { stdio: ['pipe', 'ignore', 'pipe'] });
  let err = '';
  tar.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  const exited = new Promise<number | null>((resolve, reject) => {
    tar.on('error', reject);
    tar.on('close', resolve);
  });
  try {
    await pipeline(src, tar.stdin);
  } catch (e) {
    tar.kill();
    await exited.catch(() => undefined);
    throw e;
  }
  const code = await exited;
  if (code !== 0) throw new Error(`unpacking into ${dest} failed (exit code ${code}): ${err.trim()}`);
}

/** Throws unless the regular files under `root` are exactly those of `expected`, with their sizes and contents. */
export async function verifyTree(root: string, expected: TreeFile[]): Promise<void> {
  const got = await treeManifest(root);
  const want = new Map(expected.map((f) => [f.path, f]));
  if (got.length !== want.size) throw new Error(`copy of ${root} holds ${got.length} files, the manifest ${want.size}`);
  for (const f of got) {
    const w = want.get(f.path);
    if (!w) throw new Error(`copy of ${root} holds ${f.path}, which the manifest does not`);
    if (w.size !== f.size || w.sha256 !== f.sha256) throw new Error(`copy of ${root}: ${f.path} differs from the manifest (size or sha256)`);
  }
}
