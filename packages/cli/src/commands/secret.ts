import { Command } from 'commander';
import { type ApiOptions, apiCommand, connect, printJson, printTable, run } from '../api.ts';

interface CreateOptions extends ApiOptions {
  value?: string;
  allowedHost?: string[];
}

/** All of piped stdin, without the one trailing newline `echo` adds. */
async function readPiped(): Promise<string> {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk;
  return text.replace(/\r?\n$/, '');
}

/** Reads a line from the terminal without echoing it. */
function readHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (err?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return finish();
        if (ch === '\x03') return finish(new Error('cancelled'));
        if (ch === '\x7f') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}

export function secretCommand(): Command {
  const secret = new Command('secret').description("manage the team's secrets (sandboxes see a proxy token; the value is swapped in at egress)");

  secret.addCommand(
    apiCommand('create', 'store a secret; the value comes from --value, else stdin (typed without echo on a terminal)')
      .argument('<name>', 'letters, digits, _ . -')
      .option('--value <value>', 'the value (visible in your shell history: prefer stdin)')
      .option('--allowed-host <host...>', 'hosts the value may be sent to (*.domain allowed; default any)')
      .addHelpText('after', '\nExample:\n  printf %s "$GITHUB_TOKEN" | sandpit secret create GITHUB_TOKEN --allowed-host api.github.com')
      .action(
        run(async (name: string, opts: CreateOptions) => {
          const value = opts.value ?? (process.stdin.isTTY ? await readHidden(`value for ${name}: `) : await readPiped());
          if (value === '') throw new Error('the secret value is empty');
          const created = await connect(opts).secrets.create({ name, value, allowed_hosts: opts.allowedHost });
          if (opts.json) return printJson(created);
          console.log(`created secret ${created.name}${created.allowed_hosts.length ? ` (hosts: ${created.allowed_hosts.join(', ')})` : ''}`);
        }),
      ),
  );

  secret.addCommand(
    apiCommand('list', "list the team's secrets (names only, never values)")
      .alias('ls')
      .action(
        run(async (opts: ApiOptions) => {
          const secrets = await connect(opts).secrets.list();
          if (opts.json) return printJson(secrets);
          printTable(
            ['NAME', 'ALLOWED HOSTS', 'CREATED'],
            secrets.map((s) => [s.name, s.allowed_hosts.join(',') || '*', s.created_at]),
          );
        }),
      ),
  );

  secret.addCommand(
    apiCommand('rm', 'revoke secrets')
      .alias('revoke')
      .argument('<name...>', 'secret names')
      .action(
        run(async (names: string[], opts: ApiOptions) => {
          const client = connect(opts);
          for (const name of names) await client.secrets.revoke(name);
          if (opts.json) return printJson(names.map((name) => ({ name, revoked: true })));
          for (const name of names) console.log(`revoked ${name}`);
        }),
      ),
  );

  return secret;
}
