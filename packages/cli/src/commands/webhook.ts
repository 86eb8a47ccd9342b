import { Command } from 'commander';
import { type ApiOptions, apiCommand, connect, printJson, printTable, run } from '../api.ts';
import type { WebhookDelivery } from '../sdk.ts';

interface CreateOptions extends ApiOptions {
  event: string[];
  secret?: string;
  description?: string;
}

export function webhookCommand(): Command {
  const webhook = new Command('webhook').description("manage the team's webhook endpoints (signed lifecycle events, retried for 24 h)");

  webhook.addCommand(
    apiCommand('create', 'register an endpoint; prints the signing secret once')
      .argument('<url>', 'http(s) URL of the receiver')
      .option('--event <type...>', 'event types (sandbox.created, sandbox.paused, ..., snapshot.ready, template.built); default all', ['*'])
      .option('--secret <secret>', 'signing secret (default: one is generated)')
      .option('--description <text>', 'a note shown in lists')
      .action(
        run(async (url: string, opts: CreateOptions) => {
          const created = await connect(opts).webhooks.create({ url, events: opts.event, secret: opts.secret, description: opts.description });
          if (opts.json) return printJson(created);
          console.log(`created webhook ${created.id} for ${created.events.join(', ')}`);
          console.log(`signing secret (shown once): ${created.secret}`);
        }),
      ),
  );

  webhook.addCommand(
    apiCommand('list', "list the team's webhooks")
      .alias('ls')
      .action(
        run(async (opts: ApiOptions) => {
          const hooks = await connect(opts).webhooks.list();
          if (opts.json) return printJson(hooks);
          printTable(
            ['ID', 'URL', 'EVENTS', 'ACTIVE'],
            hooks.map((w) => [w.id, w.url, w.events.join(','), w.active ? 'yes' : 'no']),
          );
        }),
      ),
  );

  webhook.addCommand(
    apiCommand('rm', 'delete webhooks (their queued deliveries are dropped)')
      .argument('<id...>', 'webhook ids')
      .action(
        run(async (ids: string[], opts: ApiOptions) => {
          const client = connect(opts);
          for (const id of ids) await client.webhooks.delete(id);
          if (opts.json) return printJson(ids.map((id) => ({ id, deleted: true })));
          for (const id of ids) console.log(`deleted ${id}`);
        }),
      ),
  );

  webhook.addCommand(
    apiCommand('test', 'queue a webhook.test delivery')
      .argument('<id>', 'webhook id')
      .action(
        run(async (id: string, opts: ApiOptions) => {
          const d = await connect(opts).webhooks.test(id);
          if (opts.json) return printJson(d);
          console.log(`queued delivery ${d.id}; see: sandpit webhook deliveries ${id}`);
        }),
      ),
  );

  webhook.addCommand(
    apiCommand('deliveries', "an endpoint's latest deliveries: status, attempts, last answer")
      .argument('<id>', 'webhook id')
      .option('--status <status>', 'pending, delivered or failed')
      .action(
        run(async (id: string, opts: ApiOptions & { status?: 'pending' | 'delivered' | 'failed' }) => {
          const { value } = await connect(opts).webhooks.deliveries(id, { status: opts.status, limit: 50 }).next();
          const deliveries: WebhookDelivery[] = value ?? [];
          if (opts.json) return printJson(deliveries);
          printTable(
            ['EVENT', 'STATUS', 'ATTEMPTS', 'LAST ANSWER', 'CREATED'],
            deliveries.map((d) => [d.event_type, d.status, String(d.attempts), d.last_status_code !== undefined ? `HTTP ${d.last_status_code}` : (d.last_error ?? '-'), d.created_at]),
          );
        }),
      ),
  );

  return webhook;
}
