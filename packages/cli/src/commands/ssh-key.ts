import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { type ApiOptions, apiCommand, connect, printJson, printTable, run } from '../api.ts';

interface AddOptions extends ApiOptions {
  name?: string;
}

/** The public key a user most likely means: the first of OpenSSH's default names that exists. */
async function defaultPublicKey(): Promise<string> {
  for (const name of ['id_ed25519.pub', 'id_ecdsa.pub', 'id_rsa.pub']) {
    const text = await readFile(join(homedir(), '.ssh', name), 'utf8').catch(() => undefined);
    if (text !== undefined) return text;
  }
  throw new Error('no ~/.ssh/id_ed25519.pub, id_ecdsa.pub or id_rsa.pub: name a public key file');
}

async function readStdin(): Promise<string> {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

export function sshKeyCommand(): Command {
  const cmd = new Command('ssh-key').description("manage the team's SSH public keys (each logs in to any of the team's sandboxes: sandpit ssh <id>)");

  cmd.addCommand(
    apiCommand('add', 'register a public key (default: ~/.ssh/id_ed25519.pub, id_ecdsa.pub or id_rsa.pub; - reads stdin)')
      .argument('[file]', 'an OpenSSH public key file, or - for stdin')
      .option('--name <name>', "what the key is for (default: the key's comment)")
      .action(
        run(async (file: string | undefined, opts: AddOptions) => {
          const text = file === '-' ? await readStdin() : file ? await readFile(file, 'utf8') : await defaultPublicKey();
          const key = await connect(opts).sshKeys.add({ public_key: text.trim(), ...(opts.name ? { name: opts.name } : {}) });
          if (opts.json) return printJson(key);
          console.log(`added SSH key ${key.name} (${key.id}) ${key.fingerprint}`);
        }),
      ),
  );

  cmd.addCommand(
    apiCommand('list', "list the team's SSH keys")
      .alias('ls')
      .action(
        run(async (opts: ApiOptions) => {
          const keys = await connect(opts).sshKeys.list();
          if (opts.json) return printJson(keys);
          printTable(
            ['ID', 'NAME', 'ALGORITHM', 'FINGERPRINT', 'CREATED'],
            keys.map((k) => [k.id, k.name, k.algorithm, k.fingerprint, k.created_at]),
          );
        }),
      ),
  );

  cmd.addCommand(
    apiCommand('delete', 'remove an SSH key: it logs in nowhere from then on')
      .alias('rm')
      .argument('<id>', 'the key id (sandpit ssh-key list)')
      .action(
        run(async (id: string, opts: ApiOptions) => {
          await connect(opts).sshKeys.delete(id);
          if (opts.json) return printJson({ deleted: id });
          console.log(`deleted SSH key ${id}`);
        }),
      ),
  );
  return cmd;
}
