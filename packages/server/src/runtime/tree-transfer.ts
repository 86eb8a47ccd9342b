import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, lstat, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { growPipe } from './host/pipe-size.ts';
import { runCaptured } from './host/posix-spawn.ts';

/** A regular file of a tree: its path relative to the root, its size and its modification time (whole seconds). */
export interface TreeFile {
  path: string;
  size: number;
  mtime: number;
}

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** Every entry under `root`: regular files with size and time, and the rest (directories, links, device nodes) by path. */
async function treeEntries(root: string): Promise<{ files: TreeFile[]; others: string[] }> {
  const files: TreeFile[] = [];
  const others: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isFile()) {
        const st = await lstat(join(root, p));
        files.push({ path: p, size: st.size, mtime: Math.floor(st.mtimeMs / 1000) });
        continue;
      }
      others.push(p);
      if (e.isDirectory()) await walk(p);
    }
  };
  await walk('');
  return { files: files.sort(byPath), others: others.sort() };
}

/**
 * Every regular file under `root` with its size and time, sorted by path: what the receiver checks an unpacked
 * copy's shape against (the bytes themselves are checked by the stream digest, see sendTree), and what
 * tells it, after a copy was cut, which files arrived whole. Directories, links and device nodes
 * (overlay whiteouts) travel in the archive.
 */
export async function treeManifest(root: string): Promise<TreeFile[]> {
  return (await treeEntries(root)).files;
}

/**
 * Which of `files` (a manifest) a cut copy in `dest` still lacks: a file tar wrote whole has its size
 * and, set right after its data, its time; one it was writing when the copy was cut has not.
 */
export async function stillMissing(dest: string, files: TreeFile[]): Promise<boolean[]> {
  return Promise.all(
    files.map(async (f) => {
      const st = await lstat(join(dest, f.path)).catch(() => undefined);
      return !(st?.isFile() && st.size === f.size && Math.floor(st.mtimeMs / 1000) === f.mtime);
    }),
  );
}

/** A selection of a manifest's files (true: send it) as the receiver sends it: a bitmap, base64. */
export function encodeSelection(select: boolean[]): string {
  const bytes = Buffer.alloc(Math.ceil(select.length / 8));
  select.forEach((on, i) => {
    if (on) bytes[i >> 3]! |= 1 << (i & 7);
  });
  return bytes.toString('base64');
}

export function decodeSelection(text: string, count: number): boolean[] {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== Math.ceil(count / 8)) throw new Error(`a selection of ${count} files is ${Math.ceil(count / 8)} bytes, got ${bytes.length}`);
  return Array.from({ length: count }, (_, i) => (bytes[i >> 3]! & (1 << (i & 7))) !== 0);
}

/** Throws unless the regular files under `root` are exactly those of `expected`, with their sizes. */
export async function verifyTree(root: string, expected: TreeFile[]): Promise<void> {
  const got = await treeManifest(root);
  const want = new Map(expected.map((f) => [f.path, f]));
  if (got.length !== want.size) throw new Error(`copy of ${root} holds ${got.length} files, the manifest ${want.size}`);
  for (const f of got) {
    const w = want.get(f.path);
    if (!w) throw new Error(`copy of ${root} holds ${f.path}, which the manifest does not`);
    if (w.size !== f.size) throw new Error(`copy of ${root}: ${f.path} differs from the manifest in size`);
  }
}

/** Options that keep what a sandbox's files need: owners by number, modes, xattrs (overlay's trusted.*), holes. */
const TAR_KEEP = ['--numeric-owner', '--xattrs', '--xattrs-include=*', '--sparse'];
/** Read and written in large pieces: each piece costs this host a page-faulting allocation when streamed through Node otherwise. */
const CHUNK = 1 << 20;

/**
 * Writes `root` as a tar stream to `out`; with `digest`, answers the BLAKE2b-512 digest of exactly the bytes
 * sent (one pass: hashed here as they go out). A copy over TLS needs none: every record is authenticated by
 * the channel's AEAD, checked as it arrives. tar writes into a FIFO of 1 MiB that this process reads into two
 * reused buffers, so the bytes cross Node without an allocation per chunk and no other process stands in the way.
 * With `select` (over the tree's manifest, in its order; a resumed copy), only the regular files
 * selected go, with every directory, link and device node again (tar sets a directory's attributes last).
 * Rejects when tar fails; the caller then cuts `out`, and the receiver never takes a cut archive for a whole one.
 */
export async function sendTree(root: string, out: Writable, opts: { digest: boolean; scratch: string; select?: boolean[] }): Promise<string | undefined> {
  const { select } = opts;
  return withFifo(opts.scratch, async (fifo) => {
    const names = select && (await selectedNames(root, select));
    let list: string[] = ['.'];
    if (names) {
      const file = `${fifo}.list`;
      await writeFile(file, names.map((n) => `./${n}\0`).join(''));
      list = ['--no-recursion', '--null', '--verbatim-files-from', '-T', file];
    }
    const child = spawn('tar', ['-c', ...TAR_KEEP, '-f', fifo, '-C', root, ...list], { stdio: ['ignore', 'ignore', 'pipe'] });
    const done = exited(child, `tar of ${root}`);
    // Handled here whatever happens below (a receiver that went away never leaves it unhandled). tar
    // opens the FIFO only once it runs: if it fails first, a writer opened here ends the wait of the
    // open below (which then reads nothing), so no thread is left blocked on it.
    done.catch(() =>
      open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).then(
        (w) => w.close(),
        () => undefined,
      ),
    );
    const fh = await open(fifo, 'r');
    growPipe(fh.fd, CHUNK);
    const hash = opts.digest ? createHash('blake2b512') : undefined;
    try {
      const bufs = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)];
      const pending: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
      for (let i = 0; ; i ^= 1) {
        await pending[i];
        const { bytesRead } = await fh.read(bufs[i]!, 0, CHUNK, null);
        if (bytesRead === 0) break;
        const chunk = bufs[i]!.subarray(0, bytesRead);
        hash?.update(chunk);
        pending[i] = writeOut(out, chunk);
        pending[i]!.catch(() => undefined);
      }
      await Promise.all(pending);
    } catch (err) {
      child.kill();
      throw err;
    } finally {
      await fh.close();
    }
    await done;
    return hash?.digest('hex');
  });
}

/** What a resumed copy sends: every entry but the regular files not selected, parents before children. */
async function selectedNames(root: string, select: boolean[]): Promise<string[]> {
  const { files, others } = await treeEntries(root);
  if (files.length !== select.length) throw new Error(`${root} holds ${files.length} files; the selection is of ${select.length}`);
  return [...others, ...files.filter((_, i) => select[i]).map((f) => f.path)].sort();
}

/**
 * The directory of a node's transfer FIFOs: `transfers` in its data directory, emptied when the node
 * starts (a node killed mid-transfer leaves its FIFO behind) and removed with the data directory.
 */
export async function transferScratch(dataDir: string): Promise<string> {
  const dir = join(dataDir, 'transfers');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** Runs `fn` with a FIFO in a private directory under `scratch` (transferScratch), removed afterwards. */
async function withFifo<T>(scratch: string, fn: (fifo: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(scratch, 'fifo-'));
  try {
    const fifo = join(dir, 'tar');
    await runCaptured('mkfifo', ['-m', '600', fifo]);
    return await fn(fifo);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function writeOut(out: Writable, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => out.write(chunk, (err) => (err ? reject(err) : resolve())));
}

/**
 * Fetches a tar stream (sendTree's) with curl and unpacks it into the existing directory `dest`; the bytes
 * never pass through Node. With `digest`, answers the BLAKE2b-512 digest of the bytes received (curl's
 * output goes through tee into tar and into b2sum, the cheapest hash here); over TLS the channel checks
 * every record instead. `headers` go to curl on its standard input, not its command line, with `config`
 * (more lines of curl's `-K` format: TLS files, say). With `body`, a POST of that JSON (a resumed copy's
 * selection). A transfer cut short fails curl (the body's chunked encoding does not end) and so this.
 */
export async function fetchTree(
  url: string,
  headers: Record<string, string>,
  dest: string,
  opts: { digest: boolean; scratch: string; config?: string[]; body?: unknown },
): Promise<string | undefined> {
  return withFifo(opts.scratch, async (fifo) => {
    const untar = `${['tar', '-x', ...TAR_KEEP, '--same-permissions', '--ignore-zeros'].map((a) => `'${a}'`).join(' ')} -C "$2" -f`;
    const curl = 'curl -sS --fail --http1.1 -K - "$1"';
    const script = opts.digest ? `set -o pipefail; ${untar} "$3" & t=$!; ${curl} | tee "$3" | b2sum; s=$?; wait $t || exit 90; exit $s` : `set -o pipefail; ${curl} | ${untar} -`;
    const lines = [...Object.entries(headers).map(([k, v]) => `header = "${k}: ${v.replace(/["\\]/g, '')}"`), ...(opts.config ?? [])];
    if (opts.body !== undefined) {
      const file = `${fifo}.body`;
      await writeFile(file, JSON.stringify(opts.body));
      lines.push('header = "content-type: application/json"', `data-binary = ${JSON.stringify(`@${file}`)}`);
    }
    const child = spawn('bash', ['-c', script, 'fetch-tree', url, dest, fifo], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end(lines.map((l) => `${l}\n`).join(''));
    const out = await exited(child, `fetching ${url.replace(/\?.*$/, '')} into ${dest}`);
    return opts.digest ? digestOf(out) : undefined;
  });
}

/** The child's standard output once it exits 0; else an error with its exit code and the tail of its standard error. */
function exited(child: ReturnType<typeof spawn>, what: string): Promise<string> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${what} failed (exit code ${code}): ${stderr.trim()}`))));
  });
}

function digestOf(b2sumOutput: string): string {
  const d = b2sumOutput.trim().split(/\s+/)[0] ?? '';
  if (!/^[0-9a-f]{128}$/.test(d)) throw new Error(`b2sum answered no digest: ${b2sumOutput.slice(0, 200)}`);
  return d;
}
