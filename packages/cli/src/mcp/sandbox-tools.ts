import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ConflictError, PreviewPorts, Sandbox, type SandpitClient } from '../sdk.ts';
import { guarded, jsonResult } from './results.ts';

const sandboxId = z.string().min(1).describe('The sandbox id (from create_sandbox or list_sandboxes)');
const STATUSES = ['active', 'pausing', 'paused', 'resuming', 'migrating', 'failed'] as const;

/** Lifecycle tools: create, list, pause, resume, snapshot, fork, kill, and preview URLs. */
export function registerSandboxTools(server: McpServer, client: SandpitClient): void {
  server.registerTool(
    'create_sandbox',
    {
      title: 'Create a sandbox',
      description: 'Starts a new isolated Linux sandbox (Debian, user `user`, home /home/user) and returns its record once it is ready.',
      inputSchema: {
        template: z.string().optional().describe('Template name or id (default platform/base)'),
        name: z.string().min(1).max(64).optional().describe('A label for the sandbox'),
        metadata: z.record(z.string(), z.string()).optional().describe('String key/values to find it again with list_sandboxes'),
        auto_pause_seconds: z.number().int().min(1).max(604_800).optional().describe('Idle seconds before the server pauses it'),
      },
    },
    ({ template, name, metadata, auto_pause_seconds }, extra) =>
      guarded(async () => {
        const sb = await Sandbox.create({ client, from_template: template, name, metadata, auto_pause_seconds, signal: extra.signal });
        return jsonResult(sb.info);
      }),
  );

  server.registerTool(
    'list_sandboxes',
    {
      title: 'List sandboxes',
      description: "The team's sandboxes, newest first.",
      inputSchema: {
        status: z.enum(STATUSES).optional().describe('Only sandboxes in this state'),
        limit: z.number().int().min(1).max(1000).optional().describe('At most this many (default 100)'),
      },
      annotations: { readOnlyHint: true },
    },
    ({ status, limit }, extra) =>
      guarded(async () => {
        const pages = client.sandboxes.list({ status, limit: limit ?? 100 }, { signal: extra.signal });
        const first = await pages.next();
        return jsonResult({ sandboxes: first.done ? [] : first.value });
      }),
  );

  server.registerTool(
    'pause_sandbox',
    { title: 'Pause a sandbox', description: 'Freezes an active sandbox (memory and disk kept); resume_sandbox or any command or file tool wakes it.', inputSchema: { sandbox_id: sandboxId } },
    ({ sandbox_id }, extra) => guarded(async () => jsonResult(await client.sandboxes.pause(sandbox_id, { signal: extra.signal }))),
  );

  server.registerTool('resume_sandbox', { title: 'Resume a sandbox', description: 'Wakes a paused sandbox where it left off.', inputSchema: { sandbox_id: sandboxId } }, ({ sandbox_id }, extra) =>
    guarded(async () => {
      const { access_token: _token, ...info } = await client.sandboxes.resume(sandbox_id, { signal: extra.signal });
      return jsonResult(info);
    }),
  );

  server.registerTool(
    'snapshot_sandbox',
    {
      title: 'Snapshot a sandbox',
      description: "Captures a sandbox's memory and disk; fork_sandbox starts new sandboxes from the snapshot.",
      inputSchema: { sandbox_id: sandboxId, name: z.string().min(1).max(64).optional().describe('A label for the snapshot') },
    },
    ({ sandbox_id, name }, extra) => guarded(async () => jsonResult(await client.snapshots.create(sandbox_id, { name, signal: extra.signal }))),
  );

  server.registerTool(
    'fork_sandbox',
    {
      title: 'Fork a sandbox',
      description: 'Starts a new sandbox from a snapshot: give snapshot_id, or sandbox_id to snapshot that sandbox first. The original keeps running.',
      inputSchema: {
        snapshot_id: z.string().min(1).optional().describe('The snapshot to start from'),
        sandbox_id: sandboxId.optional().describe('A sandbox to snapshot and fork (instead of snapshot_id)'),
        name: z.string().min(1).max(64).optional().describe('A label for the new sandbox'),
      },
    },
    ({ snapshot_id, sandbox_id, name }, extra) =>
      guarded(async () => {
        if ((snapshot_id === undefined) === (sandbox_id === undefined)) throw new Error('give exactly one of snapshot_id and sandbox_id');
        const from = snapshot_id ?? (await client.snapshots.create(sandbox_id as string, { signal: extra.signal })).id;
        const sb = await Sandbox.create({ client, from_snapshot: from, name, signal: extra.signal });
        return jsonResult({ ...sb.info, from_snapshot: from });
      }),
  );

  server.registerTool(
    'kill_sandbox',
    { title: 'Kill a sandbox', description: 'Deletes a sandbox and everything in it (snapshots stay).', inputSchema: { sandbox_id: sandboxId }, annotations: { destructiveHint: true } },
    ({ sandbox_id }, extra) => guarded(async () => jsonResult({ sandbox_id, killed: await client.sandboxes.kill(sandbox_id, { signal: extra.signal }) })),
  );

  server.registerTool(
    'get_preview_url',
    {
      title: 'Preview URL of a port',
      description: 'Publishes a port of the sandbox (the server inside must listen on 0.0.0.0) and returns the URL where it is reachable.',
      inputSchema: {
        sandbox_id: sandboxId,
        port: z.number().int().min(1).max(65535).describe('The port the server inside listens on'),
        access: z.enum(['public', 'private']).optional().describe('private: callers must send the returned preview_token'),
      },
    },
    ({ sandbox_id, port, access }, extra) =>
      guarded(async () => {
        const ports = new PreviewPorts(client, sandbox_id);
        try {
          return jsonResult(await ports.publish(port, { access, signal: extra.signal }));
        } catch (err) {
          // Already published: asking again for its URL is not a failure.
          const known = err instanceof ConflictError ? (await ports.list({ signal: extra.signal })).find((p) => p.port === port) : undefined;
          if (!known) throw err;
          return jsonResult(known);
        }
      }),
  );
}
