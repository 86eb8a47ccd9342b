import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { Sandbox, type SandpitClient } from '../sdk.ts';
import { guarded, jsonResult } from './results.ts';

const sandboxId = z.string().min(1).describe('The sandbox id');
const path = z.string().min(1).describe('Absolute, or relative to /home/user');

/** Text when the bytes are UTF-8, otherwise an embedded base64 blob (images, archives). */
export function fileContent(bytes: Uint8Array): { text: string } | { blob: string; mimeType: string } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { blob: Buffer.from(bytes).toString('base64'), mimeType: 'application/octet-stream' };
  }
}

/** read_file, write_file and list_files: a sandbox's filesystem, resuming it when paused. */
export function registerFileTools(server: McpServer, client: SandpitClient): void {
  const connect = (id: string, signal: AbortSignal) => Sandbox.connect(id, { client, signal });

  server.registerTool(
    'read_file',
    {
      title: 'Read a file',
      description: 'Reads a file from a sandbox: UTF-8 text as text, anything else as a base64 resource.',
      inputSchema: { sandbox_id: sandboxId, path },
      annotations: { readOnlyHint: true },
    },
    ({ sandbox_id, path: file }, extra) =>
      guarded(async (): Promise<CallToolResult> => {
        const sb = await connect(sandbox_id, extra.signal);
        const bytes = await sb.files.read(file, { signal: extra.signal });
        const content = fileContent(bytes);
        if ('text' in content) return { content: [{ type: 'text', text: content.text }] };
        return { content: [{ type: 'resource', resource: { uri: fileUri(sandbox_id, file), ...content } }] };
      }),
  );

  server.registerTool(
    'write_file',
    {
      title: 'Write a file',
      description: 'Creates or replaces a file in a sandbox (parent directories are created).',
      inputSchema: {
        sandbox_id: sandboxId,
        path,
        content: z.string().describe('The file content'),
        encoding: z.enum(['utf8', 'base64']).optional().describe('How content is encoded (default utf8)'),
      },
    },
    ({ sandbox_id, path: file, content, encoding }, extra) =>
      guarded(async () => {
        const sb = await connect(sandbox_id, extra.signal);
        const data = encoding === 'base64' ? new Uint8Array(Buffer.from(content, 'base64')) : content;
        return jsonResult(await sb.files.write(file, data, { signal: extra.signal }));
      }),
  );

  server.registerTool(
    'list_files',
    {
      title: 'List a directory',
      description: "A directory's entries (name, type, size, mode, modified time).",
      inputSchema: { sandbox_id: sandboxId, path: path.optional().describe('Default /home/user') },
      annotations: { readOnlyHint: true },
    },
    ({ sandbox_id, path: dir }, extra) =>
      guarded(async () => {
        const sb = await connect(sandbox_id, extra.signal);
        return jsonResult({ path: dir ?? '/home/user', entries: await sb.files.list(dir ?? '/home/user', { signal: extra.signal }) });
      }),
  );
}

/** The resource URI of a sandbox file (see file-resources.ts); relative paths are under /home/user. */
export function fileUri(sandboxId: string, file: string): string {
  const absolute = file.startsWith('/') ? file : `/home/user/${file}`;
  return `sandpit://sandboxes/${encodeURIComponent(sandboxId)}/files${absolute.split('/').map(encodeURIComponent).join('/')}`;
}
