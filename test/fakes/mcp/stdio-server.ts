// The fake MCP server over stdio: `node --import tsx test/fakes/mcp/stdio-server.ts`.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createFakeMcpServer } from './tools.js';

await createFakeMcpServer().connect(new StdioServerTransport());
