import type { GateService } from '@sandpit/server';
import { Command } from 'commander';
import { loadServer } from '../server-module.ts';

/** Opens the store, finds the team by name or id, and runs `fn` with the gate service. */
async function withTeam(team: string, fn: (gates: GateService, teamId: string) => Promise<void>): Promise<void> {
  // Loaded on use so that client commands start without the server's dependencies.
  const { GateService, loadConfig, openDb, systemClock, TeamManagementStore, TeamStore } = await loadServer();
  const db = await openDb(loadConfig());
  try {
    const teams = new TeamStore(db);
    const rec = (await teams.getTeamByName(team)) ?? (await teams.getTeam(team));
    if (!rec) throw new Error(`team '${team}' not found`);
    await fn(new GateService(new TeamManagementStore(db), systemClock), rec.id);
  } catch (err) {
    // Operator mistakes (unknown team or gate) get one line, not a stack trace.
    console.error(`sandpit gate: ${(err as Error).message}`);
    process.exitCode = 1;
  } finally {
    await db.destroy();
  }
}

/** Operator commands for per-team rollout gates; they act on the store directly (the server may be running). */
export function gateCommand(): Command {
  const gate = new Command('gate').description('turn per-team rollout gates on or off (operator)');
  for (const [verb, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    gate
      .command(`${verb} <team> <gate>`)
      .description(`${verb} a gate for a team (by name or id); takes effect on the next request`)
      .action(async (team: string, name: string) => {
        await withTeam(team, async (gates, teamId) => {
          await gates.set(teamId, name, enabled);
          console.log(`gate ${name} ${enabled ? 'enabled' : 'disabled'} for team ${team}`);
        });
      });
  }
  gate
    .command('list <team>')
    .description('show every gate of a team: on or off, and whether it is set or the default')
    .option('--json', 'print JSON')
    .action(async (team: string, opts: { json?: boolean }) => {
      await withTeam(team, async (gates, teamId) => {
        const list = await gates.list(teamId);
        if (opts.json) console.log(JSON.stringify(list));
        else for (const g of list) console.log(`${g.gate}\t${g.enabled ? 'on' : 'off'}\t${g.explicit ? 'set' : 'default'}\t${g.description}`);
      });
    });
  return gate;
}
