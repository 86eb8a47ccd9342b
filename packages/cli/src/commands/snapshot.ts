import type { Snapshot } from '../sdk.ts';
import { Command } from 'commander';
import { type ApiOptions, apiCommand, bytes, connect, integer, printJson, printTable, run, spin } from '../api.ts';

interface CreateOptions extends ApiOptions {
  name?: string;
  idempotencyKey?: string;
}

interface ListOptions extends ApiOptions {
  sandbox?: string;
  limit?: number;
}

const line = (s: Snapshot) => `${s.id} ${s.name ?? '-'} ${s.status} ${bytes(s.size_bytes)}`;

export function snapshotCommand(): Command {
  const snapshot = new Command('snapshot').description('capture sandboxes (memory and disk) and manage the snapshots; fork one with sandbox create --snapshot');

  snapshot.addCommand(
    apiCommand('create', 'snapshot a sandbox (returns when the snapshot is ready)')
      .argument('<sandbox-id>', 'sandbox to capture (active or paused)')
      .option('--name <name>', 'label, 1 to 64 characters')
      .option('--idempotency-key <key>', 'a retry with the same key returns the first snapshot instead of making another')
      .action(
        run(async (sandboxId: string, opts: CreateOptions) => {
          const client = connect(opts);
          const made = await spin(`snapshotting ${sandboxId}`, opts, () => client.snapshots.create(sandboxId, { name: opts.name, idempotencyKey: opts.idempotencyKey }));
          if (opts.json) return printJson(made);
          console.log(`snapshot ${line(made)}`);
          if (made.status === 'failed') process.exitCode = 1;
        }),
      ),
  );

  snapshot.addCommand(
    apiCommand('list', "list the team's snapshots, newest first")
      .alias('ls')
      .option('--sandbox <id>', 'only snapshots of this sandbox')
      .option('--limit <n>', 'show at most n', integer)
      .action(
        run(async (opts: ListOptions) => {
          const found: Snapshot[] = [];
          const filters = { sandboxId: opts.sandbox, limit: opts.limit === undefined ? undefined : Math.min(opts.limit, 1000) };
          for await (const page of connect(opts).snapshots.list(filters)) {
            found.push(...page);
            if (opts.limit !== undefined && found.length >= opts.limit) break;
          }
          const shown = opts.limit === undefined ? found : found.slice(0, opts.limit);
          if (opts.json) return printJson(shown);
          printTable(
            ['ID', 'NAME', 'STATUS', 'SIZE', 'SANDBOX', 'CREATED'],
            shown.map((s) => [s.id, s.name ?? '', s.status, bytes(s.size_bytes), s.sandbox_id, s.created_at]),
          );
        }),
      ),
  );

  snapshot.addCommand(
    apiCommand('get', 'show one snapshot')
      .argument('<id>', 'snapshot id')
      .action(
        run(async (id: string, opts: ApiOptions) => {
          const s = await connect(opts).snapshots.get(id);
          if (opts.json) return printJson(s);
          console.log(line(s));
          console.log(`sandbox ${s.sandbox_id}, template ${s.template_id ?? '-'}, created ${s.created_at}`);
        }),
      ),
  );

  snapshot.addCommand(
    apiCommand('rename', "set a snapshot's label ('' removes it)")
      .argument('<id>', 'snapshot id')
      .argument('<name>', 'new label')
      .action(
        run(async (id: string, name: string, opts: ApiOptions) => {
          const s = await connect(opts).snapshots.rename(id, name === '' ? null : name);
          if (opts.json) return printJson(s);
          console.log(line(s));
        }),
      ),
  );

  snapshot.addCommand(
    apiCommand('rm', 'delete snapshots (already-deleted ones are not an error)')
      .alias('delete')
      .argument('<id...>', 'snapshot ids')
      .action(
        run(async (ids: string[], opts: ApiOptions) => {
          const client = connect(opts);
          const results = [];
          for (const id of ids) results.push({ id, deleted: await client.snapshots.delete(id) });
          if (opts.json) return printJson(results);
          for (const r of results) console.log(r.deleted ? `deleted ${r.id}` : `${r.id} was already gone`);
        }),
      ),
  );

  return snapshot;
}
