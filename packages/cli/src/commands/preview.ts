import { PreviewPorts } from '../sdk.ts';
import { Command } from 'commander';
import { type ApiOptions, apiCommand, connect, integer, printJson, printTable, run } from '../api.ts';

/** Preview ports are control-plane calls: no need to resume the sandbox for its access token. */
const portsOf = (id: string, opts: ApiOptions) => new PreviewPorts(connect(opts), id);

interface PublishOptions extends ApiOptions {
  access?: 'public' | 'private';
}

export function previewCommand(): Command {
  const preview = new Command('preview').description("publish a sandbox's ports at preview URLs");

  preview.addCommand(
    apiCommand('publish', 'publish a port (the server inside must listen on 0.0.0.0)')
      .argument('<id>', 'sandbox id')
      .argument('<port>', 'port number', integer)
      .option('--access <access>', "public or private (default: the sandbox's preview_access)")
      .action(
        run(async (id: string, port: number, opts: PublishOptions) => {
          const p = await portsOf(id, opts).publish(port, { access: opts.access });
          if (opts.json) return printJson(p);
          console.log(`${p.url} (${p.access})`);
          if (p.preview_token) console.log(`preview token (send as X-Preview-Token): ${p.preview_token}`);
        }),
      ),
  );

  preview.addCommand(
    apiCommand('list', 'list published ports')
      .alias('ls')
      .argument('<id>', 'sandbox id')
      .action(
        run(async (id: string, opts: ApiOptions) => {
          const ports = await portsOf(id, opts).list();
          if (opts.json) return printJson(ports);
          printTable(
            ['PORT', 'ACCESS', 'URL'],
            ports.map((p) => [String(p.port), p.access, p.url]),
          );
        }),
      ),
  );

  preview.addCommand(
    apiCommand('rm', 'unpublish a port')
      .alias('unpublish')
      .argument('<id>', 'sandbox id')
      .argument('<port>', 'port number', integer)
      .action(
        run(async (id: string, port: number, opts: ApiOptions) => {
          await portsOf(id, opts).unpublish(port);
          if (opts.json) return printJson({ port, unpublished: true });
          console.log(`unpublished ${port}`);
        }),
      ),
  );

  return preview;
}
