import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Sandbox, type SandpitClient } from '../sdk.ts';
import { fileContent, fileUri } from './file-tools.ts';

/** How many active sandboxes' home directories a resource listing walks (each costs a request). */
const LISTED_SANDBOXES = 20;

const one = (value: string | string[] | undefined) => decodeURIComponent([value ?? ''].flat()[0] ?? '');

/**
 * Sandbox files as resources, `sandpit://sandboxes/{sandbox_id}/files/<absolute path>`: any file can be
 * read by URI; the listing offers the files in /home/user of active sandboxes (paused ones stay asleep).
 */
export function registerFileResources(server: McpServer, client: SandpitClient): void {
  const template = new ResourceTemplate('sandpit://sandboxes/{sandbox_id}/files{+path}', {
    list: async (extra) => {
      const page = await client.sandboxes.list({ status: 'active', limit: LISTED_SANDBOXES }, { signal: extra.signal }).next();
      const resources = [];
      for (const info of page.done ? [] : page.value) {
        const sb = await Sandbox.connect(info.id, { client, signal: extra.signal });
        for (const entry of await sb.files.list('/home/user', { signal: extra.signal })) {
          if (entry.type !== 'file') continue;
          resources.push({ uri: fileUri(info.id, `/home/user/${entry.name}`), name: `${info.name ?? info.id}: ${entry.name}`, size: entry.size });
        }
      }
      return { resources };
    },
  });
  server.registerResource(
    'sandbox-file',
    template,
    { title: 'A file in a sandbox', description: 'sandpit://sandboxes/{sandbox_id}/files/<absolute path>: UTF-8 files as text, others as base64 blobs' },
    async (uri, variables, extra) => {
      const sandboxId = one(variables.sandbox_id);
      const path = one(variables.path);
      const sb = await Sandbox.connect(sandboxId, { client, signal: extra.signal });
      return { contents: [{ uri: uri.href, ...fileContent(await sb.files.read(path, { signal: extra.signal })) }] };
    },
  );
}
