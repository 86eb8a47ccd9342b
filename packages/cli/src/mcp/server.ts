import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { SandpitClient } from '../sdk.ts';
import { registerCommandTool } from './command-tool.ts';
import { registerFileResources } from './file-resources.ts';
import { registerFileTools } from './file-tools.ts';
import { registerSandboxTools } from './sandbox-tools.ts';

export const MCP_SERVER_NAME = 'sandpit';
const VERSION = '0.1.0';

/** The Sandpit MCP server: every tool and resource, acting through one SDK client (one API key). */
export function createMcpServer(client: SandpitClient): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: VERSION },
    { instructions: 'Sandpit sandboxes are isolated Linux machines: create one, run commands and edit files in it, snapshot or fork it, kill it when done.' },
  );
  registerSandboxTools(server, client);
  registerCommandTool(server, client);
  registerFileTools(server, client);
  registerFileResources(server, client);
  return server;
}
