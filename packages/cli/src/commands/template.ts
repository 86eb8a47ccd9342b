import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import type { CreateTemplateParams, SandpitClient, Template } from '../sdk.ts';
import { Command } from 'commander';
import { type ApiOptions, apiCommand, connect, printJson, printTable, run } from '../api.ts';

interface CreateOptions extends ApiOptions {
  file: string;
  name?: string;
  follow: boolean;
  /** false with --no-cache. */
  cache: boolean;
}

interface BuildOptions extends ApiOptions {
  image?: string;
  dockerfile?: string;
  name?: string;
  registryUser?: string;
  registrySecret?: string;
  useImageCmd?: boolean;
  startCmd?: string;
  readyCmd?: string;
  /** false with --no-cache. */
  cache: boolean;
  follow: boolean;
}

/** A template name from an image reference or a Dockerfile's directory: `ghcr.io/acme/web-app:1.2` -> `web-app`. */
function defaultName(opts: BuildOptions): string {
  const raw = opts.image ? opts.image.split('@')[0]!.split('/').at(-1)!.split(':')[0]! : basename(dirname(resolve(opts.dockerfile!)));
  const name = raw
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 64);
  if (!name) throw new Error('cannot derive a template name: pass --name');
  return name;
}

interface LogsOptions extends ApiOptions {
  build?: string;
}

/** Prints a build's log lines to stderr (stdout stays for the result) and fails the command when the build fails. */
async function follow(client: SandpitClient, templateId: string, buildId: string): Promise<void> {
  const result = await client.templates.logs(templateId, buildId, { onLine: (line) => console.error(line) });
  if (result.status === 'failed') {
    console.error(`build failed: ${result.error ?? 'unknown error'}`);
    process.exitCode = 1;
  }
}

function describe(t: Template): void {
  const rows: [string, string | undefined][] = [
    ['id', t.id],
    ['name', t.name],
    ['status', t.status],
    ['error', t.error],
    ['base', t.base],
    ['image', t.from_image],
    ['steps', t.steps.map((s) => s.type).join(', ') || undefined],
    ['start cmd', t.start_cmd],
    ['ready cmd', t.ready_cmd],
    ['warm pool', `${t.warm_pool_ready}/${t.warm_pool}`],
    ['latest build', t.latest_build_id],
    ['updated', t.updated_at],
  ];
  for (const [label, value] of rows) if (value !== undefined) console.log(`${`${label}:`.padEnd(14)}${value}`);
}

export function templateCommand(): Command {
  const template = new Command('template').description('build and manage templates (a base plus steps: run, copy, env, workdir, archive)');

  template.addCommand(
    apiCommand('create', 'build a template from a JSON recipe (the POST /templates body) and follow its log')
      .requiredOption('-f, --file <recipe.json>', 'the recipe')
      .option('--name <name>', "override the recipe's name")
      .option('--no-cache', 'run every step even where its layer is cached (no_cache)')
      .option('--no-follow', 'return once the build has started')
      .addHelpText('after', '\nrecipe.json:\n  {"name": "py-tools", "steps": [{"type": "env", "env": {"MODE": "ci"}}, {"type": "run", "command": "pip install requests"}]}')
      .action(
        run(async (opts: CreateOptions) => {
          const recipe = JSON.parse(await readFile(opts.file, 'utf8')) as CreateTemplateParams;
          if (opts.name) recipe.name = opts.name;
          if (!opts.cache) recipe.no_cache = true;
          const client = connect(opts);
          const started = await client.templates.create(recipe);
          if (!opts.json) console.error(`building ${started.name} (${started.id}), build ${started.build_id}`);
          if (opts.follow) await follow(client, started.id, started.build_id);
          const now = opts.follow ? { ...(await client.templates.get(started.id)), build_id: started.build_id } : started;
          if (opts.json) return printJson(now);
          console.log(`${now.name} ${now.status}`);
        }),
      ),
  );

  template.addCommand(
    apiCommand('build', 'build a template from a container image or a Dockerfile and follow the pull and build')
      .option('--image <ref>', 'image reference, e.g. registry.example:5000/team/app:1.2 (Docker Hub when no registry is named)')
      .option('--dockerfile <path>', 'Dockerfile (FROM, RUN, COPY of inline heredocs, ENV, WORKDIR, USER, ARG, CMD, ENTRYPOINT)')
      .option('--name <name>', 'template name (default: from the image repository or the Dockerfile directory)')
      .option('--registry-user <user>', 'user name for a private registry')
      .option('--registry-secret <secret>', 'name of the team secret holding the registry password or token')
      .option('--use-image-cmd', "run the image's ENTRYPOINT/CMD as start_cmd")
      .option('--start-cmd <cmd>', 'start_cmd')
      .option('--ready-cmd <cmd>', 'ready_cmd')
      .option('--no-cache', 'run every step even where its layer is cached (no_cache)')
      .option('--no-follow', 'return once the build has started')
      .action(
        run(async (opts: BuildOptions) => {
          if (!opts.image === !opts.dockerfile) throw new Error('give one of --image or --dockerfile');
          if (!opts.registryUser !== !opts.registrySecret) throw new Error('--registry-user and --registry-secret go together');
          const params: CreateTemplateParams = {
            name: opts.name ?? defaultName(opts),
            ...(opts.image ? { from_image: opts.image } : { dockerfile: await readFile(opts.dockerfile!, 'utf8') }),
            ...(opts.registryUser ? { registry_auth: { username: opts.registryUser, password_secret: opts.registrySecret! } } : {}),
            ...(opts.useImageCmd ? { use_image_cmd: true } : {}),
            ...(opts.startCmd ? { start_cmd: opts.startCmd } : {}),
            ...(opts.readyCmd ? { ready_cmd: opts.readyCmd } : {}),
            ...(opts.cache ? {} : { no_cache: true }),
          };
          const client = connect(opts);
          const started = await client.templates.create(params);
          if (!opts.json) console.error(`building ${started.name} (${started.id}), build ${started.build_id}`);
          if (opts.follow) await follow(client, started.id, started.build_id);
          const now = opts.follow ? { ...(await client.templates.get(started.id)), build_id: started.build_id } : started;
          if (opts.json) return printJson(now);
          console.log(`${now.name} ${now.status}`);
        }),
      ),
  );

  template.addCommand(
    apiCommand('list', "list curated platform/* templates and the team's own")
      .alias('ls')
      .action(
        run(async (opts: ApiOptions) => {
          const templates = await connect(opts).templates.list();
          if (opts.json) return printJson(templates);
          printTable(
            ['ID', 'NAME', 'STATUS', 'BASE', 'UPDATED'],
            templates.map((t) => [t.id, t.name, t.status, t.base, t.updated_at]),
          );
        }),
      ),
  );

  template.addCommand(
    apiCommand('get', 'show one template')
      .argument('<template>', 'UUID or name')
      .action(
        run(async (id: string, opts: ApiOptions) => {
          const t = await connect(opts).templates.get(id);
          if (opts.json) printJson(t);
          else describe(t);
        }),
      ),
  );

  template.addCommand(
    apiCommand('rm', 'delete team templates (already-deleted ones are not an error)')
      .alias('delete')
      .argument('<template...>', 'UUIDs or names')
      .action(
        run(async (ids: string[], opts: ApiOptions) => {
          const client = connect(opts);
          const results = [];
          for (const id of ids) results.push({ id, deleted: await client.templates.delete(id) });
          if (opts.json) return printJson(results);
          for (const r of results) console.log(r.deleted ? `deleted ${r.id}` : `${r.id} was already gone`);
        }),
      ),
  );

  template.addCommand(
    apiCommand('logs', "print a build's log, following it until the build ends (default: the latest build)")
      .argument('<template>', 'UUID or name')
      .option('--build <id>', 'this build instead of the latest')
      .action(
        run(async (id: string, opts: LogsOptions) => {
          const client = connect(opts);
          const t = await client.templates.get(id);
          const buildId = opts.build ?? t.latest_build_id;
          if (!buildId) throw new Error(`${t.name} has no build`);
          const result = await client.templates.logs(t.id, buildId, { onLine: (line) => (opts.json ? undefined : console.log(line)) });
          if (opts.json) printJson(await client.templates.build(t.id, buildId));
          else if (result.status === 'failed') console.error(`build failed: ${result.error ?? 'unknown error'}`);
          if (result.status === 'failed') process.exitCode = 1;
        }),
      ),
  );

  return template;
}
