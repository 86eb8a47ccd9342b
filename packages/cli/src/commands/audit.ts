import type { Command } from 'commander';
import { type ApiOptions, apiCommand, connect, printJson, printTable, run } from '../api.ts';
import type { AuditEntry } from '../sdk.ts';

interface AuditOptions extends ApiOptions {
  actor?: string;
  action?: string;
  resourceType?: string;
  resource?: string;
  since?: string;
  until?: string;
  limit: string;
}

export function auditCommand(): Command {
  return apiCommand('audit', "the team's audit log, newest first (needs audit:read)")
    .option('--actor <id>', 'an API key id or a user id')
    .option('--action <action>', 'e.g. sandbox.create, secret.revoke')
    .option('--resource-type <type>', 'sandbox, snapshot, template, secret, api_key, member, webhook')
    .option('--resource <id>', 'a resource id')
    .option('--since <time>', 'RFC 3339 time')
    .option('--until <time>', 'RFC 3339 time')
    .option('--limit <n>', 'entries to show', '50')
    .action(
      run(async (opts: AuditOptions) => {
        const { value } = await connect(opts)
          .auditLog.list({ actor: opts.actor, action: opts.action, resourceType: opts.resourceType, resourceId: opts.resource, since: opts.since, until: opts.until, limit: Number(opts.limit) })
          .next();
        const entries: AuditEntry[] = value ?? [];
        if (opts.json) return printJson(entries);
        printTable(
          ['AT', 'ACTOR', 'ACTION', 'RESOURCE', 'STATUS', 'FROM'],
          entries.map((e) => [e.at, e.actor.key_id ?? e.actor.type, e.action, e.resource.id ?? e.resource.type, String(e.status), e.request.ip]),
        );
      }),
    );
}
