import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { Sandbox, type SandpitClient } from '../sdk.ts';
import { guarded, jsonResult } from './results.ts';

/** What a tool result keeps of each stream; the whole output still goes out as progress while it runs. */
const KEEP_CHARS = 256 * 1024;

/** Appends to a bounded buffer that keeps the tail (the end of a log is what explains an exit code). */
function tailBuffer() {
  let text = '';
  let dropped = 0;
  return {
    add(chunk: string) {
      text += chunk;
      if (text.length > KEEP_CHARS) {
        dropped += text.length - KEEP_CHARS;
        text = text.slice(-KEEP_CHARS);
      }
    },
    get value() {
      return dropped ? `[${dropped} earlier characters dropped]\n${text}` : text;
    },
  };
}

/** run_command: runs to completion, streaming output as progress notifications when the client asks for progress. */
export function registerCommandTool(server: McpServer, client: SandpitClient): void {
  server.registerTool(
    'run_command',
    {
      title: 'Run a command',
      description:
        'Runs a shell command (/bin/sh -c, as user `user`, in /home/user unless cwd says otherwise) in a sandbox, resuming it when paused. ' +
        'Returns exit code, stdout and stderr; output arrives as progress notifications while it runs when the client sends a progress token.',
      inputSchema: {
        sandbox_id: z.string().min(1).describe('The sandbox id'),
        command: z.string().min(1).describe('The shell command line'),
        cwd: z.string().optional().describe('Working directory'),
        env: z.record(z.string(), z.string()).optional().describe('Extra environment variables'),
        timeout_s: z.number().int().positive().max(86_400).optional().describe("The command's time limit in seconds (default 30; exit code 124 at the limit)"),
      },
    },
    ({ sandbox_id, command, cwd, env, timeout_s }, extra) =>
      guarded(async () => {
        const sb = await Sandbox.connect(sandbox_id, { client, signal: extra.signal });
        const progressToken = extra._meta?.progressToken;
        const stdout = tailBuffer();
        const stderr = tailBuffer();
        let step = 0;
        // Notifications go out in order; a client that left makes them fail, which must not fail the command.
        let sent = Promise.resolve();
        const report = (message: string) => {
          if (progressToken === undefined) return;
          const progress = ++step;
          sent = sent.then(() => extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } })).catch(() => undefined);
        };
        const result = await sb.commands.stream(command, {
          cwd,
          env,
          timeoutS: timeout_s,
          signal: extra.signal,
          onStdout: (chunk) => {
            stdout.add(chunk);
            report(chunk);
          },
          onStderr: (chunk) => {
            stderr.add(chunk);
            report(chunk);
          },
        });
        await sent;
        return jsonResult({ exit_code: result.exitCode, ...(result.error ? { error: result.error } : {}), stdout: stdout.value, stderr: stderr.value });
      }),
  );
}
