#!/usr/bin/env node
import { Command } from 'commander';
import { serveCommand } from './commands/serve.ts';
import { teamCommand } from './commands/team.ts';

const program = new Command('sandpit').description('Sandpit: self-hosted sandboxes for AI agents').version('0.1.0');
program.addCommand(serveCommand());
program.addCommand(teamCommand());
await program.parseAsync(process.argv);
