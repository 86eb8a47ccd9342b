import type { Command } from 'commander';
import { type ApiOptions, apiCommand, CLI_FAILURE, exitStatus, run, sandboxOf } from '../api.ts';
import { endPipedInput } from '../piped-eof.ts';

interface ShellOptions extends ApiOptions {
  command?: string;
}

export function shellCommand(): Command {
  return apiCommand('shell', 'open an interactive terminal in a sandbox; exits with the remote exit code (255 when sandpit itself fails)')
    .argument('<id>', 'sandbox id')
    .option('--command <command>', 'run this instead of the login shell (bash -l)')
    .addHelpText('after', "\nInput may also be piped: printf 'make test\\nexit $?\\n' | sandpit shell sb-local-...")
    .action(
      run(async (id: string, opts: ShellOptions) => {
        const sandbox = await sandboxOf(id, opts);
        const size = () => ({ cols: process.stdout.columns || 80, rows: process.stdout.rows || 24 });
        const info = await sandbox.terminals.create({ ...size(), command: opts.command });
        const term = await sandbox.terminals.connect(info.id);
        term.onData((data) => process.stdout.write(data));
        const stdin = process.stdin;
        // Raw mode hands every key (Ctrl-C included) to the remote terminal instead of this process.
        if (stdin.isTTY) stdin.setRawMode(true);
        const onInput = (data: Uint8Array) => term.write(data);
        let stopEof = () => {};
        // In raw mode keys never end the stream; only piped input reaches its end.
        const onEnd = () => (stopEof = endPipedInput(term));
        const onResize = () => {
          const { cols, rows } = size();
          term.resize(cols, rows);
        };
        stdin.on('data', onInput);
        stdin.once('end', onEnd);
        process.on('SIGWINCH', onResize);
        try {
          const exit = await term.wait();
          process.exitCode = exitStatus(exit.exitCode);
        } finally {
          stopEof();
          process.off('SIGWINCH', onResize);
          stdin.off('data', onInput);
          stdin.off('end', onEnd);
          if (stdin.isTTY) stdin.setRawMode(false);
          stdin.pause();
        }
      }, CLI_FAILURE),
    );
}
