import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { Command } from 'commander';
import { type ApiOptions, apiCommand, bytes, printJson, run, sandboxOf } from '../api.ts';
import { transferBar } from '../progress.ts';

interface Remote {
  id: string;
  path: string;
}

interface Copied {
  source: string;
  destination: string;
  bytes: number;
}

/** `<id>:<path>` names a path in a sandbox; anything with a slash before the first colon is local (./a:b). */
const REMOTE = /^([^/:]+):(.*)$/;

function parse(arg: string): Remote | undefined {
  const m = REMOTE.exec(arg);
  return m ? { id: m[1] ?? '', path: m[2] || '.' } : undefined;
}

/** Counts bytes into the progress bar as they pass. */
function counter(add: (n: number) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      add(chunk.length);
      done(null, chunk);
    },
  });
}

async function upload(src: string, to: Remote, opts: ApiOptions): Promise<Copied> {
  const local = await stat(src);
  if (!local.isFile()) throw new Error(`${src} is not a file`);
  const path = to.path.endsWith('/') ? `${to.path}${basename(src)}` : to.path;
  const sandbox = await sandboxOf(to.id, opts);
  const bar = transferBar(`upload ${basename(src)}`, local.size, !opts.json);
  try {
    const body = Readable.toWeb(createReadStream(src).pipe(counter((n) => bar.add(n)))) as ReadableStream<Uint8Array>;
    const entry = await sandbox.files.write(path, body);
    return { source: src, destination: `${to.id}:${entry.path}`, bytes: entry.size };
  } finally {
    bar.stop();
  }
}

async function download(from: Remote, dst: string, opts: ApiOptions): Promise<Copied> {
  const sandbox = await sandboxOf(from.id, opts);
  const entry = await sandbox.files.stat(from.path);
  if (entry.type !== 'file') throw new Error(`${entry.path} is a ${entry.type}, not a file`);
  const intoDir =
    dst.endsWith('/') ||
    (await stat(dst).then(
      (s) => s.isDirectory(),
      () => false,
    ));
  const path = intoDir ? `${dst.replace(/\/+$/, '')}/${entry.name}` : dst;
  const bar = transferBar(`download ${entry.name}`, entry.size, !opts.json);
  try {
    const body = await sandbox.files.read(entry.path, { format: 'stream' });
    await pipeline(
      Readable.fromWeb(body as NodeReadableStream<Uint8Array>),
      counter((n) => bar.add(n)),
      createWriteStream(path),
    );
  } finally {
    bar.stop();
  }
  return { source: `${from.id}:${entry.path}`, destination: path, bytes: entry.size };
}

export function cpCommand(): Command {
  return apiCommand('cp', 'copy a file between this machine and a sandbox (streamed; a progress bar for large files)')
    .argument('<src>', 'a local path, or <sandbox-id>:<path>')
    .argument('<dst>', 'a local path, or <sandbox-id>:<path> (a trailing / or an existing local directory keeps the file name)')
    .addHelpText('after', '\nExamples:\n  sandpit cp ./data.csv sb-local-...:work/data.csv\n  sandpit cp sb-local-...:/tmp/report.pdf .')
    .action(
      run(async (src: string, dst: string, opts: ApiOptions) => {
        const from = parse(src);
        const to = parse(dst);
        if (from && to) throw new Error('copying between two sandboxes is not supported: copy through this machine');
        let copied: Copied;
        if (to) copied = await upload(src, to, opts);
        else if (from) copied = await download(from, dst, opts);
        else throw new Error('one of <src> and <dst> must be <sandbox-id>:<path>');
        if (opts.json) printJson(copied);
        else console.log(`${copied.source} -> ${copied.destination} (${bytes(copied.bytes)})`);
      }),
    );
}
