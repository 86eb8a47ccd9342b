import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdtemp, open, readdir, lstat, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { runCaptured } from './host/posix-spawn.ts';

/** A regular file of a tree: its path relative to the root and its size. */
export interface TreeFile {
  path: string;
  size: number;
}

/**
 * Every regular file under `root` with its size, sorted by path: what the receiver checks an unpacked
 * copy's shape against (the bytes themselves are checked by the stream digest, see sendTree). Directories,
 * links and device nodes (overlay whiteouts) travel in the archive.
 */
export async function treeManifest(root: string): Promise<TreeFile[]> {
  const out: TreeFile[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out.push({ path: p, size: (await lstat(join(root, p))).size });
    }
  };
  await walk('');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
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
 * Writes `root` as a tar stream to `out` and answers the BLAKE2b-512 digest of exactly the bytes sent (one pass:
 * hashed here as they go out). tar writes into a FIFO that this process reads into two reused buffers,
 * so the bytes cross Node without an allocation per chunk and no other process stands in the way.
 * Rejects when tar fails; the caller then cuts `out`, and the receiver never takes a cut archive for a whole one.
 */
export async function sendTree(root: string, out: Writable): Promise<string> {
  return withFifo(async (fifo) => {
    const child = spawn('tar', ['-c', ...TAR_KEEP, '-f', fifo, '-C', root, '.'], { stdio: ['ignore', 'ignore', 'pipe'] });
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
    const hash = createHash('blake2b512');
    try {
      const bufs = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)];
      const pending: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
      for (let i = 0; ; i ^= 1) {
        await pending[i];
        const { bytesRead } = await fh.read(bufs[i]!, 0, CHUNK, null);
        if (bytesRead === 0) break;
        const chunk = bufs[i]!.subarray(0, bytesRead);
        hash.update(chunk);
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
    return hash.digest('hex');
  });
}

/** Runs `fn` with a FIFO in a private temporary directory, removed afterwards. */
async function withFifo<T>(fn: (fifo: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'sandpit-transfer-'));
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
 * Fetches a tar stream (sendTree's) with curl and unpacks it into the existing directory `dest`,
 * answering the BLAKE2b-512 digest of the bytes received; the bytes never pass through Node. `headers`
 * go to curl on its standard input, not its command line, with `config` (more lines of curl's `-K`
 * format: TLS files, say). A transfer cut short fails curl (the body's chunked encoding does not end) and so this.
 */
export async function fetchTree(url: string, headers: Record<string, string>, dest: string, config: string[] = []): Promise<string> {
  return withFifo(async (fifo) => {
    const untar = ['tar', '-x', ...TAR_KEEP, '--same-permissions', '--ignore-zeros', '-C', '"$2"', '-f', '"$3"'].map((a) => (a.startsWith('"') ? a : `'${a}'`)).join(' ');
    // tar reads the FIFO in the background; curl's stream goes through tee into it and into b2sum (the cheapest hash here).
    const script = `set -o pipefail; ${untar} & t=$!; curl -sS --fail --http1.1 -K - "$1" | tee "$3" | b2sum; s=$?; wait $t || exit 90; exit $s`;
    const child = spawn('bash', ['-c', script, 'fetch-tree', url, dest, fifo], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end([...Object.entries(headers).map(([k, v]) => `header = "${k}: ${v.replace(/["\\]/g, '')}"`), ...config].map((l) => `${l}\n`).join(''));
    return digestOf(await exited(child, `fetching ${url.replace(/\?.*$/, '')} into ${dest}`));
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
