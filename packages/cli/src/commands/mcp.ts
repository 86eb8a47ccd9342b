import type { AddressInfo } from 'node:net';
import { apiCommand, type ApiOptions, connect, integer, run } from '../api.ts';
import { SandpitClient } from '../sdk.ts';

interface McpOptions extends ApiOptions {
  http?: boolean;
  host: string;
  port: number;
}

/** `sandpit mcp`: the MCP server, on stdio for a client that starts it, or on Streamable HTTP. */
export function mcpCommand() {
  return apiCommand('mcp', 'serve Sandpit to MCP clients (stdio by default, or Streamable HTTP with --http)')
    .option('--http', 'serve Streamable HTTP at /mcp instead of stdio')
    .option('--host <host>', 'HTTP address to listen on', '127.0.0.1')
    .option('--port <port>', 'HTTP port (0: any free one)', integer, 3333)
    .action(
      run(async (opts: McpOptions) => {
        // Loaded on use: the MCP SDK would slow every other command's start.
        if (opts.http) {
          const { MCP_PATH, serveHttp } = await import('../mcp/http.ts');
          // Over HTTP each request may bring its own key; the configured one is only a fallback.
          const fallback = new SandpitClient({ apiUrl: opts.apiUrl, apiKey: opts.apiKey });
          const http = await serveHttp({ host: opts.host, port: opts.port, apiUrl: fallback.apiUrl, apiKey: fallback.http.apiKey });
          const { port } = http.address() as AddressInfo;
          console.error(`sandpit MCP server on http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}${MCP_PATH}`);
          const stop = () => http.close(() => process.exit(0));
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
          return;
        }
        // stdout carries the protocol: nothing else may be printed there.
        const { createMcpServer } = await import('../mcp/server.ts');
        const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
        const server = createMcpServer(connect(opts));
        await server.connect(new StdioServerTransport());
      }),
    );
}
