import { Command } from 'commander';
import { type ApiOptions, apiCommand, connect, printJson, printTable, run } from '../api.ts';

interface CreateKeyOptions extends ApiOptions {
  permission?: string[];
}

export function keyCommand(): Command {
  const key = new Command('key').description("manage the team's API keys (needs the keys:manage permission)");

  key.addCommand(
    apiCommand('create', 'create an API key; it is shown once')
      .argument('<name>', 'what the key is for')
      .option('--permission <permission...>', 'grant only these permissions (default: all of the calling key)')
      .action(
        run(async (name: string, opts: CreateKeyOptions) => {
          const created = await connect(opts).apiKeys.create({ name, permissions: opts.permission });
          if (opts.json) return printJson(created);
          console.log(`API key ${created.name} (${created.id}), permissions: ${created.permissions.join(', ')}`);
          console.log(`key (shown once): ${created.key}`);
        }),
      ),
  );

  key.addCommand(
    apiCommand('list', "list the team's live API keys")
      .alias('ls')
      .action(
        run(async (opts: ApiOptions) => {
          const keys = await connect(opts).apiKeys.list();
          if (opts.json) return printJson(keys);
          printTable(
            ['ID', 'NAME', 'PREFIX', 'PERMISSIONS', 'CREATED'],
            keys.map((k) => [k.id, k.name, k.prefix, k.permissions.join(','), k.created_at]),
          );
        }),
      ),
  );

  key.addCommand(
    apiCommand('revoke', 'revoke an API key')
      .argument('<id>', 'key id')
      .action(
        run(async (id: string, opts: ApiOptions) => {
          await connect(opts).apiKeys.revoke(id);
          if (opts.json) return printJson({ id, revoked: true });
          console.log(`revoked ${id}`);
        }),
      ),
  );

  return key;
}
