import type { ProcessInfo } from '../sdk.ts';
import { Command } from 'commander';
import { type ApiOptions, apiCommand, keyValue, printJson, printTable, run, sandboxOf } from '../api.ts';

interface StartOptions extends ApiOptions {
  cwd?: string;
  env?: Record<string, string>;
}

interface LogsOptions extends ApiOptions {
  follow?: boolean;
}

interface KillOptions extends ApiOptions {
  signal?: string;
}

const state = (p: ProcessInfo) => (p.running ? 'running' : `exited ${p.exit_code ?? '?'}`);

export function processCommand(): Command {
  const proc = new Command('process').alias('ps').description('background processes in a sandbox (they outlive this command)');

  proc.addCommand(
    apiCommand('start', 'start a background process and return at once')
      .argument('<id>', 'sandbox id')
      .argument('<command...>', 'after --: one argument runs under /bin/sh -c; several run as a program and its arguments')
      .option('--cwd <dir>', 'working directory (default /home/user)')
      .option('--env <KEY=VALUE>', 'environment variable (repeatable)', keyValue)
      .addHelpText('after', "\nExample:\n  sandpit process start sb-local-... -- 'python3 -m http.server 8080'")
      .action(
        run(async (id: string, argv: string[], opts: StartOptions) => {
          const [command = '', ...args] = argv;
          const sandbox = await sandboxOf(id, opts);
          const p = await sandbox.processes.start(command, { args: args.length ? args : undefined, env: opts.env, cwd: opts.cwd });
          if (opts.json) return printJson(p);
          console.log(`started ${p.id} (pid ${p.pid})`);
        }),
      ),
  );

  proc.addCommand(
    apiCommand('list', 'list running and recently exited processes')
      .alias('ls')
      .argument('<id>', 'sandbox id')
      .action(
        run(async (id: string, opts: ApiOptions) => {
          const list = await (await sandboxOf(id, opts)).processes.list();
          if (opts.json) return printJson(list);
          printTable(
            ['ID', 'PID', 'STATE', 'STARTED', 'COMMAND'],
            list.map((p) => [p.id, String(p.pid), state(p), p.started_at, [p.command, ...p.args].join(' ')]),
          );
        }),
      ),
  );

  proc.addCommand(
    apiCommand('logs', "print a process's output (the last 1 MiB); --follow streams it until the process exits")
      .argument('<id>', 'sandbox id')
      .argument('<process>', 'process id or pid')
      .option('-f, --follow', 'keep streaming until the process exits')
      .action(
        run(async (id: string, processId: string, opts: LogsOptions) => {
          const sandbox = await sandboxOf(id, opts);
          if (opts.follow && !opts.json) {
            await sandbox.processes.stream(processId, { onStdout: (c) => process.stdout.write(c), onStderr: (c) => process.stderr.write(c) });
            return;
          }
          const out = await sandbox.processes.output(processId);
          if (opts.json) return printJson(out);
          process.stdout.write(out.stdout);
          process.stderr.write(out.stderr);
        }),
      ),
  );

  proc.addCommand(
    apiCommand('kill', 'kill a process group and forget it, or with --signal only signal it')
      .argument('<id>', 'sandbox id')
      .argument('<process>', 'process id or pid')
      .option('-s, --signal <signal>', 'send this signal (TERM, SIGINT, 9, ...) instead')
      .action(
        run(async (id: string, processId: string, opts: KillOptions) => {
          const sandbox = await sandboxOf(id, opts);
          if (opts.signal !== undefined) {
            const signal = /^\d+$/.test(opts.signal) ? Number(opts.signal) : opts.signal;
            await sandbox.processes.signal(processId, signal);
            if (opts.json) return printJson({ id: processId, signal });
            return console.log(`sent ${opts.signal} to ${processId}`);
          }
          const killed = await sandbox.processes.kill(processId);
          if (opts.json) return printJson({ id: processId, killed });
          console.log(killed ? `killed ${processId}` : `${processId} was already gone`);
        }),
      ),
  );

  return proc;
}
