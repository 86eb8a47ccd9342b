import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SandpitClient } from '../sdk.ts';
import { createMcpServer } from './server.ts';

export interface HttpOptions {
  host: string;
  port: number;
  /** Control-plane address and a fallback key for requests that bring none. */
  apiUrl?: string;
  apiKey?: string;
}

export const MCP_PATH = '/mcp';

/** The Sandpit API key a request carries: `Authorization: Bearer <key>` or `X-API-Key`. */
function keyOf(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  if (auth?.toLowerCase().startsWith('bearer ')) return auth.slice(7).trim() || undefined;
  const header = req.headers['x-api-key'];
  return typeof header === 'string' && header !== '' ? header : undefined;
}

function fail(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/**
 * MCP over Streamable HTTP at /mcp, stateless: each POST gets its own server and transport, acting
 * with the caller's API key (or the configured one), so one endpoint can serve several teams.
 * Progress and results stream back on the POST's own event stream.
 */
export async function serveHttp(opts: HttpOptions): Promise<Server> {
  const loopback = opts.host === '127.0.0.1' || opts.host === 'localhost' || opts.host === '::1';
  const http = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) fail(res, 500, (err as Error).message);
      else res.end();
    });
  });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== MCP_PATH) return fail(res, 404, `MCP is served at ${MCP_PATH}`);
    if (req.method !== 'POST') return fail(res, 405, 'this stateless server takes POST only');
    const apiKey = keyOf(req) ?? opts.apiKey;
    if (!apiKey) return fail(res, 401, 'no Sandpit API key: send Authorization: Bearer <key> (or X-API-Key), or start the server with SANDPIT_API_KEY');
    const port = (http.address() as AddressInfo).port;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      // On loopback a web page could otherwise reach it by DNS rebinding; elsewhere the operator decides.
      ...(loopback ? { enableDnsRebindingProtection: true, allowedHosts: [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`] } : {}),
    });
    const server = createMcpServer(new SandpitClient({ apiUrl: opts.apiUrl, apiKey }));
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port, opts.host, () => resolve());
  });
  return http;
}
