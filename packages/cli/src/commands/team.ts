import { Command } from 'commander';
import { loadServer } from '../server-module.ts';

/** Operator commands that act on the store directly (the server may be running). */
export function teamCommand(): Command {
  const team = new Command('team').description('manage teams (operator)');
  team
    .command('create <name>')
    .description('create a team with an owner and its first admin API key')
    .option('--email <email>', 'owner e-mail')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { email?: string; json?: boolean }) => {
      const { AuthService, loadConfig, openDb, systemClock, TeamStore } = await loadServer();
      const db = await openDb(loadConfig());
      try {
        const auth = new AuthService(new TeamStore(db), systemClock);
        if (await auth.teams.getTeamByName(name)) throw new Error(`team '${name}' exists already`);
        const t = await auth.createTeam(name, { email: opts.email });
        if (opts.json) console.log(JSON.stringify({ team_id: t.teamId, user_id: t.userId, key_id: t.keyId, api_key: t.key }));
        else console.log(`team ${name} (${t.teamId}) created\nadmin API key (shown once): ${t.key}`);
      } finally {
        await db.destroy();
      }
    });
  return team;
}
