/**
 * The service as an MCP server: the two catalog meta-tools, over one
 * organization's tool catalog, for desktop assistants and IDEs. Writes go
 * through a WriteGate (approval) before they run: the gate either lets the
 * call through or answers with a result the client reads (e.g. "a person
 * must approve this; call again with approval_id").
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ResolvedToolCall, RunContext, ToolCatalog } from './catalog.js';
import {
  applySearchConnectorTools,
  EXECUTE_CONNECTOR_TOOL,
  executeConnectorToolDefinition,
  resolveExecuteConnectorTool,
  runExecuteConnectorTool,
  SEARCH_CONNECTOR_TOOLS,
  searchConnectorToolsDefinition,
} from './meta-tools.js';
import { failedOutcome, toolErrorBody, type ToolOutcome } from './tool-result.js';

/** Decides whether a resolved write may run now. */
export interface WriteGate {
  /**
   * `run`: go ahead (an approval was granted and is now used up).
   * `answer`: do not run; give the client this outcome instead.
   */
  check(call: ResolvedToolCall, approvalId: string | undefined): Promise<{ readonly kind: 'run' } | { readonly kind: 'answer'; readonly outcome: ToolOutcome }>;
}

export interface CatalogMcpServerOptions {
  readonly catalog: ToolCatalog;
  readonly context: RunContext;
  readonly writeGate: WriteGate;
  readonly serverInfo: { readonly name: string; readonly version: string };
}

const executeSchema = executeConnectorToolDefinition.input_schema as { properties: Record<string, unknown> } & Record<string, unknown>;

const MCP_TOOLS: readonly Tool[] = [
  {
    name: SEARCH_CONNECTOR_TOOLS,
    description: searchConnectorToolsDefinition.description,
    inputSchema: searchConnectorToolsDefinition.input_schema as Tool['inputSchema'],
    annotations: { title: 'Search connector tools', readOnlyHint: true, openWorldHint: false },
  },
  {
    name: EXECUTE_CONNECTOR_TOOL,
    description: `${executeConnectorToolDefinition.description} A write tool needs a person's approval first: the call answers \`approval_required\` with an \`approval_id\`; once a person approved it (POST /api/v1/mcp/approvals/:approval_id), call again with the same tool and arguments plus \`approval_id\`.`,
    inputSchema: {
      ...executeSchema,
      type: 'object',
      properties: {
        ...executeSchema.properties,
        approval_id: { type: 'string', description: 'the approval granted for this exact write (from an approval_required answer)' },
      },
    },
    // it may run write tools: clients should confirm with their user too
    annotations: { title: 'Execute a connector tool', readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  },
];

const toResult = (outcome: ToolOutcome): CallToolResult => {
  const structured = JSON.parse(JSON.stringify(outcome)) as Record<string, unknown>;
  return { content: [{ type: 'text', text: JSON.stringify(outcome) }], structuredContent: structured, isError: 'error' in outcome };
};

async function execute(options: CatalogMcpServerOptions, args: Record<string, unknown>): Promise<ToolOutcome> {
  const { approval_id: approvalId, ...metaArgs } = args;
  if (approvalId !== undefined && typeof approvalId !== 'string') {
    return failedOutcome(toolErrorBody('invalid_arguments', 'approval_id must be a string', { issues: [{ path: 'approval_id', message: 'must be string' }] }));
  }
  const resolution = resolveExecuteConnectorTool(options.catalog, metaArgs);
  if (!resolution.ok) return failedOutcome(resolution.error);
  if (resolution.effect === 'write') {
    const verdict = await options.writeGate.check(resolution, approvalId);
    if (verdict.kind === 'answer') return verdict.outcome;
  }
  return runExecuteConnectorTool(options.catalog, resolution, options.context);
}

/** A low-level MCP Server answering tools/list and tools/call over the catalog. Connect it to a transport. */
export function createCatalogMcpServer(options: CatalogMcpServerOptions): Server {
  const server = new Server(options.serverInfo, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...MCP_TOOLS] }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const args = request.params.arguments ?? {};
    if (request.params.name === SEARCH_CONNECTOR_TOOLS) return toResult(applySearchConnectorTools(options.catalog, args));
    if (request.params.name === EXECUTE_CONNECTOR_TOOL) return toResult(await execute(options, args));
    return toResult(
      failedOutcome(
        toolErrorBody('unknown_tool', `no tool named "${request.params.name}"; this server has ${SEARCH_CONNECTOR_TOOLS} and ${EXECUTE_CONNECTOR_TOOL}`),
      ),
    );
  });
  return server;
}
