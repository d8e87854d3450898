/** An MCP server's tools as connector tools: schema kept, effect from the tool's annotations. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ToolError, type ConnectorTool, type JsonSchema } from '../contract.js';
import { withSession, type McpConfig, type McpSessionOptions } from './session.js';

/** `get-weather` -> `get_weather`: connector tool names are snake_case; the MCP name is kept for the call */
const toolNameOf = (mcpName: string): string => {
  const name = mcpName
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return /^[a-z]/.test(name) ? name : `t_${name}`;
};

/** listing pages followed at most (a server that pages forever is cut off) */
const MAX_PAGES = 50;

export async function listServerTools(client: Client, signal: AbortSignal): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { signal });
    tools.push(...listed.tools);
    cursor = listed.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

/** the schema as our Ajv (2020-12) reads it: an MCP server may declare draft-07 in `$schema` */
function inputSchemaOf(tool: Tool): JsonSchema {
  const { $schema: _declared, ...schema } = tool.inputSchema as Record<string, unknown>;
  return { ...schema, type: 'object' };
}

/** What an MCP call result becomes: structured content when given, else its content blocks; `isError` is a tool error. */
function resultOf(mcpName: string, result: Record<string, unknown>): unknown {
  const content = Array.isArray(result['content']) ? (result['content'] as { type?: string; text?: string }[]) : [];
  if (result['isError'] === true) {
    const text = content
      .filter((block) => block.type === 'text')
      .map((block) => block.text)
      .join('\n');
    throw new ToolError('mcp_tool_error', text || `MCP tool ${mcpName} reported an error`);
  }
  if (result['structuredContent'] !== undefined) return result['structuredContent'];
  return { content };
}

export function connectorToolOf(tool: Tool, options: McpSessionOptions): ConnectorTool {
  // MCP's readOnlyHint is the server's claim that the tool changes nothing; without it a tool may write and goes through approval
  const effect = tool.annotations?.readOnlyHint === true ? 'read' : 'write';
  return {
    name: toolNameOf(tool.name),
    description: tool.description?.trim() || tool.annotations?.title || `MCP tool ${tool.name}`,
    input_schema: inputSchemaOf(tool),
    effect,
    run: (args, ctx) =>
      withSession(ctx.config as unknown as McpConfig, options, ctx.signal, ctx.net, async (client) => {
        const result = await client.callTool({ name: tool.name, arguments: args }, undefined, { signal: ctx.signal });
        return resultOf(tool.name, result);
      }),
  };
}
