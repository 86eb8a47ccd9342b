import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { type ApiOptions, apiCommand, CLI_FAILURE, connect, run, sandboxOf } from '../api.ts';

interface SshOptions extends ApiOptions {
  forward: string[];
  tty?: boolean;
  keysOnly?: boolean;
  sshOption: string[];
}

/** The password prompt's answer comes from the environment, so the token is on no command line and in no file. */
const ASKPASS = '#!/bin/sh\nprintf \'%s\\n\' "$SANDPIT_SSH_PASSWORD"\n';

const collect = (value: string, into: string[]) => [...into, value];

/** The system's ssh to the gateway; resolves with its exit status (255 when it cannot start, as ssh's own failures). */
function runSsh(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn('ssh', args, { stdio: 'inherit', env });
    child.once('error', (err) => {
      console.error(`error: could not run ssh: ${err.message}`);
      resolve(CLI_FAILURE);
    });
    child.once('exit', (code) => resolve(code ?? CLI_FAILURE));
  });
}

export function sshCommand(): Command {
  return apiCommand('ssh', "log in to a sandbox with the system's ssh through the SSH gateway (your registered keys, else the sandbox's access token)")
    .argument('<id>', 'sandbox id')
    .argument('[command...]', 'run this instead of a login shell (exits with its status)')
    .option('-L, --forward <spec>', 'an ssh -L forward, e.g. 8080:localhost:8080 (repeatable)', collect, [])
    .option('-t, --tty', 'a terminal even for a command')
    .option('--keys-only', "do not fall back to the sandbox's access token")
    .option('-o, --ssh-option <option>', 'an ssh -o option, e.g. StrictHostKeyChecking=accept-new (repeatable)', collect, [])
    .addHelpText('after', '\nA command with options of its own goes after --.\nExamples:\n  sandpit ssh sb-123\n  sandpit ssh sb-123 -- make -j2 test\n  sandpit ssh sb-123 -L 8080:localhost:8080')
    .action(
      run(async (id: string, command: string[], opts: SshOptions) => {
        const client = connect(opts);
        const port = (await client.info()).ssh_port;
        if (!port) throw new Error('this server runs no SSH gateway (SANDPIT_SSH_PORT is 0)');
        const host = new URL(client.apiUrl).hostname;
        const args = ['-p', String(port), ...opts.forward.flatMap((f) => ['-L', f]), ...(opts.tty ? ['-t'] : []), ...opts.sshOption.flatMap((o) => ['-o', o])];
        const env: NodeJS.ProcessEnv = { ...process.env };
        let dir: string | undefined;
        if (!opts.keysOnly) {
          // Attaching resumes a paused sandbox and yields its token, offered only if no key is accepted.
          const sandbox = await sandboxOf(id, opts);
          id = sandbox.id;
          dir = await mkdtemp(join(tmpdir(), 'sandpit-ssh-'));
          const askpass = join(dir, 'askpass');
          await writeFile(askpass, ASKPASS, { mode: 0o700 });
          Object.assign(env, { SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', SANDPIT_SSH_PASSWORD: sandbox.accessToken });
        }
        try {
          process.exitCode = await runSsh([...args, `${id}@${host}`, ...command], env);
        } finally {
          if (dir) await rm(dir, { recursive: true, force: true });
        }
      }, CLI_FAILURE),
    );
}
