/** The fake MCP server's tools, shared by its stdio and HTTP entry points. */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';

export interface RecordedCall {
  readonly name: string;
  readonly args: Record<string, unknown>;
}

export const FAKE_TOOLS: Tool[] = [
  {
    name: 'get_forecast',
    description: 'Weather forecast for a city (fake).',
    inputSchema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { city: { type: 'string', minLength: 1 }, days: { type: 'integer', minimum: 1, maximum: 7, default: 1 } },
      required: ['city'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'create-ticket',
    description: 'Opens a ticket in the fake helpdesk.',
    inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
    annotations: { readOnlyHint: false, destructiveHint: false },
  },
  {
    name: 'always_fails',
    description: 'Reports a tool error every time.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
];

/** tools listed per page: two pages, so clients must follow nextCursor */
const PAGE = 2;

/** A low-level MCP server with the fake tools; `calls` records every tools/call. */
export function createFakeMcpServer(calls: RecordedCall[] = []): Server {
  const server = new Server({ name: 'fake-mcp', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const start = Number(request.params?.cursor ?? 0);
    const tools = FAKE_TOOLS.slice(start, start + PAGE);
    return start + PAGE < FAKE_TOOLS.length ? { tools, nextCursor: String(start + PAGE) } : { tools };
  });
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const { name, arguments: args = {} } = request.params;
    calls.push({ name, args });
    if (name === 'get_forecast') {
      const forecast = { city: args['city'], days: args['days'], sky: 'clear', high_c: 21, secret_env: process.env['FAKE_MCP_SECRET'] ?? null };
      return { content: [{ type: 'text', text: JSON.stringify(forecast) }], structuredContent: forecast };
    }
    if (name === 'create-ticket') return { content: [{ type: 'text', text: `ticket T-1 opened: ${String(args['title'])}` }] };
    if (name === 'always_fails') return { content: [{ type: 'text', text: 'the helpdesk is on fire' }], isError: true };
    throw new Error(`unknown tool ${name}`);
  });
  return server;
}
