import type { CommandOptions } from '../sdk.ts';
import type { Command } from 'commander';
import { type ApiOptions, apiCommand, CLI_FAILURE, connect, exitStatus, integer, keyValue, printJson, run } from '../api.ts';

interface ExecOptions extends ApiOptions {
  cwd?: string;
  env?: Record<string, string>;
  timeout?: number;
}

export function execCommand(): Command {
  return apiCommand('exec', "run a command in a sandbox, streaming its output; exits with the command's exit code (255 when sandpit itself fails)")
    .argument('<id>', 'sandbox id')
    .argument('<command...>', 'after --: one argument runs under /bin/sh -c (quote pipelines); several run as a program and its arguments')
    .option('--cwd <dir>', 'working directory (default /home/user)')
    .option('--env <KEY=VALUE>', 'environment variable (repeatable)', keyValue)
    .option('--timeout <seconds>', 'kill the command after this long (default 30)', integer)
    .addHelpText('after', "\nExamples:\n  sandpit exec sb-local-... -- 'echo $HOME | wc -c'\n  sandpit exec sb-local-... -- ls -la /tmp")
    .action(
      run(async (id: string, argv: string[], opts: ExecOptions) => {
        const client = connect(opts);
        const [program = '', ...args] = argv;
        const command: CommandOptions = { cwd: opts.cwd, env: opts.env, timeoutS: opts.timeout };
        if (args.length) command.args = args;
        if (opts.json) {
          const r = await client.sandboxes.exec(id, program, command);
          printJson({ stdout: r.stdout, stderr: r.stderr, exit_code: r.exitCode });
          process.exitCode = exitStatus(r.exitCode);
          return;
        }
        const r = await client.sandboxes.execStream(id, program, {
          ...command,
          onStdout: (chunk) => process.stdout.write(chunk),
          onStderr: (chunk) => process.stderr.write(chunk),
        });
        if (r.error) console.error(`sandpit: ${r.error}`);
        process.exitCode = exitStatus(r.exitCode);
      }, CLI_FAILURE),
    );
}
