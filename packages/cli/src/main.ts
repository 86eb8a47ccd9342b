#!/usr/bin/env node
import { Command } from 'commander';
import { execCommand } from './commands/exec.ts';
import { gateCommand } from './commands/gate.ts';
import { keyCommand } from './commands/key.ts';
import { sandboxCommand } from './commands/sandbox.ts';
import { serveCommand } from './commands/serve.ts';
import { teamCommand } from './commands/team.ts';

const program = new Command('sandpit').description('Sandpit: self-hosted sandboxes for AI agents').version('0.1.0');
program.addCommand(serveCommand());
program.addCommand(teamCommand());
program.addCommand(gateCommand());
program.addCommand(sandboxCommand());
program.addCommand(execCommand());
program.addCommand(keyCommand());
await program.parseAsync(process.argv);
