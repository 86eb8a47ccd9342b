import type { SandboxInfo, SandboxStatus, VolumeMount } from '../sdk.ts';
import { Command, InvalidArgumentError } from 'commander';
import { type ApiOptions, apiCommand, connect, integer, keyValue, printJson, printTable, run, spin } from '../api.ts';
import { applyChangesCommand, changesCommand } from './sandbox-changes.ts';
import { eventsCommand, metricsCommand } from './sandbox-observe.ts';

interface CreateOptions extends ApiOptions {
  name?: string;
  template?: string;
  snapshot?: string;
  metadata?: Record<string, string>;
  env?: Record<string, string>;
  autoPause?: number;
  autoDelete?: number;
  volume?: VolumeMount[];
}

interface ListOptions extends ApiOptions {
  status?: string;
  metadata?: Record<string, string>;
  limit?: number;
}

/** Collects repeated `--volume <volume>:<path>[:ro]` options (a volume's id or name has no colon). */
function volumeMount(value: string, into: VolumeMount[] = []): VolumeMount[] {
  const colon = value.indexOf(':');
  if (colon <= 0) throw new InvalidArgumentError(`expected <volume>:<path>[:ro], got '${value}'`);
  const rest = value.slice(colon + 1);
  const readOnly = rest.endsWith(':ro');
  const mount: VolumeMount = { volume: value.slice(0, colon), path: readOnly ? rest.slice(0, -3) : rest };
  return [...into, readOnly ? { ...mount, read_only: true } : mount];
}

function describe(s: SandboxInfo): void {
  const rows: [string, string | undefined][] = [
    ['id', s.id],
    ['name', s.name],
    ['status', s.status],
    ['template', s.template_id],
    ['resources', `${s.resources.vcpu_count} vCPU, ${s.resources.memory_mib} MiB memory, ${s.resources.disk_mib} MiB disk`],
    ['auto-pause', s.auto_pause_seconds === undefined ? undefined : `${s.auto_pause_seconds} s`],
    ['auto-delete', s.auto_delete_seconds === undefined ? undefined : `${s.auto_delete_seconds} s`],
    ['auto-delete at', s.auto_delete_at],
    [
      'metadata',
      Object.keys(s.metadata).length
        ? Object.entries(s.metadata)
            .map(([k, v]) => `${k}=${v}`)
            .join(', ')
        : undefined,
    ],
    ['created', s.created_at],
  ];
  for (const [label, value] of rows) if (value !== undefined) console.log(`${`${label}:`.padEnd(16)}${value}`);
}

export function sandboxCommand(): Command {
  const sandbox = new Command('sandbox').alias('sb').description('create, inspect, pause, resume and delete sandboxes');

  sandbox.addCommand(
    apiCommand('create', 'create a sandbox (ready to use when this returns)')
      .option('--name <name>', 'human-readable name')
      .option('--template <template>', 'template UUID or name (default platform/base)')
      .option('--snapshot <id>', 'fork this snapshot (memory and disk) instead of starting from a template')
      .option('--metadata <key=value>', 'metadata entry (repeatable)', keyValue)
      .option('--env <KEY=VALUE>', 'environment variable for every process (repeatable)', keyValue)
      .option('--auto-pause <seconds>', 'pause after this long active', integer)
      .option('--auto-delete <seconds>', 'delete after this long paused', integer)
      .option('--volume <volume:path[:ro]>', 'mount a volume (id or name) at an absolute path, read-only with :ro (repeatable)', volumeMount)
      .action(
        run(async (opts: CreateOptions) => {
          const client = connect(opts);
          const created = await spin('creating sandbox', opts, () =>
            client.sandboxes.create({
              name: opts.name,
              from_template: opts.template,
              from_snapshot: opts.snapshot,
              metadata: opts.metadata,
              env: opts.env,
              auto_pause_seconds: opts.autoPause,
              auto_delete_seconds: opts.autoDelete,
              volumes: opts.volume,
            }),
          );
          if (opts.json) return printJson(created);
          console.log(`created ${created.id} (${created.template_id}, ${created.status})`);
        }),
      ),
  );

  sandbox.addCommand(
    apiCommand('list', "list the team's sandboxes, newest first")
      .alias('ls')
      .option('--status <status>', 'only these statuses (comma-separated)')
      .option('--metadata <key=value>', 'only sandboxes with this metadata (repeatable)', keyValue)
      .option('--limit <n>', 'show at most n', integer)
      .action(
        run(async (opts: ListOptions) => {
          const client = connect(opts);
          const found: SandboxInfo[] = [];
          const filters = {
            status: opts.status?.split(',') as SandboxStatus[] | undefined,
            metadata: opts.metadata,
            limit: opts.limit === undefined ? undefined : Math.min(opts.limit, 1000),
          };
          for await (const page of client.sandboxes.list(filters)) {
            found.push(...page);
            if (opts.limit !== undefined && found.length >= opts.limit) break;
          }
          const shown = opts.limit === undefined ? found : found.slice(0, opts.limit);
          if (opts.json) return printJson(shown);
          printTable(
            ['ID', 'NAME', 'STATUS', 'TEMPLATE', 'CREATED'],
            shown.map((s) => [s.id, s.name ?? '', s.status, s.template_id, s.created_at]),
          );
        }),
      ),
  );

  sandbox.addCommand(
    apiCommand('get', 'show one sandbox')
      .argument('<id>', 'sandbox id')
      .action(
        run(async (id: string, opts: ApiOptions) => {
          const info = await connect(opts).sandboxes.get(id);
          if (opts.json) printJson(info);
          else describe(info);
        }),
      ),
  );

  sandbox.addCommand(
    apiCommand('pause', 'pause a sandbox (its full state is kept)')
      .argument('<id>', 'sandbox id')
      .option('--disk-only', 'keep only its disk: every process ends, and resume boots it afresh')
      .action(
        run(async (id: string, opts: ApiOptions & { diskOnly?: boolean }) => {
          const info = await spin(`pausing ${id}`, opts, () => connect(opts).sandboxes.pause(id, opts.diskOnly ? { keepMemory: false } : {}));
          if (opts.json) printJson(info);
          else console.log(`${info.id} ${info.status}`);
        }),
      ),
  );

  sandbox.addCommand(
    apiCommand('resume', 'resume a paused sandbox')
      .argument('<id>', 'sandbox id')
      .option('--boot', 'boot it from its disk instead of restoring its processes')
      .action(
        run(async (id: string, opts: ApiOptions & { boot?: boolean }) => {
          const info = await spin(`resuming ${id}`, opts, () => connect(opts).sandboxes.resume(id, opts.boot ? { keepMemory: false } : {}));
          if (opts.json) printJson(info);
          else console.log(`${info.id} ${info.status}`);
        }),
      ),
  );

  sandbox.addCommand(
    apiCommand('migrate', 'move a sandbox to another node; a running gVisor one keeps its processes (several hosts)')
      .argument('<id>', 'sandbox id')
      .option('--to <node>', 'the node to move it to (default: the one placement picks)')
      .action(
        run(async (id: string, opts: ApiOptions & { to?: string }) => {
          const info = await spin(`moving ${id}`, opts, () => connect(opts).sandboxes.migrate(id, opts.to === undefined ? {} : { node: opts.to }));
          if (opts.json) printJson(info);
          else console.log(`${info.id} ${info.status} on ${info.node ?? 'its node'}`);
        }),
      ),
  );

  sandbox.addCommand(
    apiCommand('kill', 'delete sandboxes and everything they hold (already-deleted ones are not an error)')
      .alias('rm')
      .argument('<id...>', 'sandbox ids')
      .action(
        run(async (ids: string[], opts: ApiOptions) => {
          const client = connect(opts);
          const results = [];
          for (const id of ids) results.push({ id, killed: await spin(`deleting ${id}`, opts, () => client.sandboxes.kill(id)) });
          if (opts.json) return printJson(results);
          for (const r of results) console.log(r.killed ? `killed ${r.id}` : `${r.id} was already gone`);
        }),
      ),
  );

  sandbox.addCommand(metricsCommand());
  sandbox.addCommand(eventsCommand());
  sandbox.addCommand(changesCommand());
  sandbox.addCommand(applyChangesCommand());
  return sandbox;
}
