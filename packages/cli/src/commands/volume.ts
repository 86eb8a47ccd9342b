import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { Command } from 'commander';
import { type ApiOptions, apiCommand, bytes, connect, integer, printJson, printTable, run } from '../api.ts';
import type { Volume, VolumeFileEntry } from '../sdk.ts';

interface SizeOptions extends ApiOptions {
  size: number;
}

const line = (v: Volume) => `${v.id} ${v.name} ${v.size_mib} MiB, ${bytes(v.used_bytes)} used`;

/** Reads a local file, or stdin for `-`, as a stream the SDK uploads while it is read. */
async function source(local: string): Promise<ReadableStream<Uint8Array>> {
  if (local === '-') return Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>;
  if (!(await stat(local)).isFile()) throw new Error(`${local} is not a file`);
  return Readable.toWeb(createReadStream(local)) as ReadableStream<Uint8Array>;
}

export function volumeCommand(): Command {
  const volume = new Command('volume').alias('vol').description("manage the team's volumes (disks that outlive sandboxes) and their files; mount one with sandbox create --volume");

  volume.addCommand(
    apiCommand('create', 'make a volume')
      .argument('<name>', 'unique in the team: letters, digits, ., _, -')
      .requiredOption('--size <MiB>', 'its quota in MiB', integer)
      .action(
        run(async (name: string, opts: SizeOptions) => {
          const made = await connect(opts).volumes.create({ name, size_mib: opts.size });
          if (opts.json) return printJson(made);
          console.log(`created volume ${line(made)}`);
        }),
      ),
  );

  volume.addCommand(
    apiCommand('list', "list the team's volumes, newest first")
      .alias('ls')
      .action(
        run(async (opts: ApiOptions) => {
          const found: Volume[] = [];
          for await (const page of connect(opts).volumes.list({ limit: 1000 })) found.push(...page);
          if (opts.json) return printJson(found);
          printTable(
            ['ID', 'NAME', 'SIZE', 'USED', 'MOUNTED BY', 'CREATED'],
            found.map((v) => [v.id, v.name, `${v.size_mib} MiB`, bytes(v.used_bytes), String(v.mounted_by.length), v.created_at]),
          );
        }),
      ),
  );

  volume.addCommand(
    apiCommand('get', 'show one volume and the sandboxes that mount it')
      .argument('<volume>', 'volume id or name')
      .action(
        run(async (id: string, opts: ApiOptions) => {
          const v = await connect(opts).volumes.get(id);
          if (opts.json) return printJson(v);
          console.log(line(v));
          console.log(`created ${v.created_at}; mounted by: ${v.mounted_by.length ? v.mounted_by.join(', ') : '-'}`);
        }),
      ),
  );

  volume.addCommand(
    apiCommand('grow', "raise a volume's quota (volumes never shrink)")
      .argument('<volume>', 'volume id or name')
      .requiredOption('--size <MiB>', 'the new quota in MiB', integer)
      .action(
        run(async (id: string, opts: SizeOptions) => {
          const v = await connect(opts).volumes.grow(id, opts.size);
          if (opts.json) return printJson(v);
          console.log(`grew volume ${line(v)}`);
        }),
      ),
  );

  volume.addCommand(
    apiCommand('rm', 'delete volumes and their files, for good (refused while a sandbox mounts one)')
      .argument('<volume...>', 'volume ids or names')
      .action(
        run(async (ids: string[], opts: ApiOptions) => {
          const client = connect(opts);
          for (const id of ids) {
            if (!(await client.volumes.delete(id))) throw new Error(`no volume ${id}`);
            if (!opts.json) console.log(`deleted ${id}`);
          }
          if (opts.json) printJson(ids.map((id) => ({ volume: id, deleted: true })));
        }),
      ),
  );

  volume.addCommand(
    apiCommand('put', 'upload a file into a volume (streamed; parents are made, an existing file is replaced)')
      .argument('<volume>', 'volume id or name')
      .argument('<local>', 'a local file, or - for stdin')
      .argument('<path>', 'path inside the volume')
      .action(
        run(async (id: string, local: string, path: string, opts: ApiOptions) => {
          const entry = await connect(opts).volumes.files.write(id, path, await source(local));
          if (opts.json) return printJson(entry);
          console.log(`${local === '-' ? 'stdin' : local} -> ${id}:${entry.path} (${bytes(entry.size)})`);
        }),
      ),
  );

  volume.addCommand(
    apiCommand('cat', 'write a file of a volume to stdout (streamed)')
      .argument('<volume>', 'volume id or name')
      .argument('<path>', 'path inside the volume')
      .action(
        run(async (id: string, path: string, opts: ApiOptions) => {
          const body = await connect(opts).volumes.files.read(id, path, { format: 'stream' });
          try {
            await pipeline(Readable.fromWeb(body as NodeReadableStream<Uint8Array>), process.stdout, { end: false });
          } catch (err) {
            // A reader that stopped early (`| head`) is not a failure: the download is dropped.
            if ((err as NodeJS.ErrnoException).code !== 'EPIPE') throw err;
          }
        }),
      ),
  );

  volume.addCommand(
    apiCommand('files', 'list a directory of a volume (default its root)')
      .argument('<volume>', 'volume id or name')
      .argument('[path]', 'directory inside the volume', '/')
      .action(
        run(async (id: string, path: string, opts: ApiOptions) => {
          const entries: VolumeFileEntry[] = await connect(opts).volumes.files.list(id, path);
          if (opts.json) return printJson(entries);
          printTable(
            ['TYPE', 'SIZE', 'MODIFIED', 'PATH'],
            entries.map((e) => [e.type, e.type === 'file' ? bytes(e.size) : '-', e.modified_at, e.path]),
          );
        }),
      ),
  );

  volume.addCommand(
    apiCommand('rm-file', 'delete a file, symlink or empty directory of a volume')
      .argument('<volume>', 'volume id or name')
      .argument('<path>', 'path inside the volume')
      .action(
        run(async (id: string, path: string, opts: ApiOptions) => {
          await connect(opts).volumes.files.remove(id, path);
          if (opts.json) return printJson({ volume: id, path, deleted: true });
          console.log(`deleted ${id}:${path}`);
        }),
      ),
  );

  return volume;
}
