/**
 * The two meta-tools the model sees instead of every connector tool:
 * `search_connector_tools` finds tools of the run's catalog and
 * `execute_connector_tool` runs one. Executing is two steps so the agent
 * runtime can gate on approval in between:
 *
 *   const resolution = resolveExecuteConnectorTool(catalog, call.arguments);
 *   if (!resolution.ok) -> tool result { error: resolution.error }
 *   else if (resolution.effect === 'write' && approval needed) -> wait, or result { error: { code: 'approval_denied' } }
 *   else -> tool result await runExecuteConnectorTool(catalog, resolution, { orgId, signal })
 */
import type { ToolDefinition } from '../llm/types.js';
import type { Resolution, ResolvedToolCall, RunContext, ToolCatalog, ToolSummary } from './catalog.js';
import { compileSchema, validateCopy } from './json-schema.js';
import { failedOutcome, toolErrorBody, type ToolErrorBody, type ToolOutcome } from './tool-result.js';

export const SEARCH_CONNECTOR_TOOLS = 'search_connector_tools';
export const EXECUTE_CONNECTOR_TOOL = 'execute_connector_tool';
export type MetaToolName = typeof SEARCH_CONNECTOR_TOOLS | typeof EXECUTE_CONNECTOR_TOOL;

const MAX_SEARCH_RESULTS = 25;
const DEFAULT_SEARCH_RESULTS = 8;

export const searchConnectorToolsDefinition: ToolDefinition = {
  name: SEARCH_CONNECTOR_TOOLS,
  description: [
    'Find the tools you can use in this run: tools of the connected systems (code host, issue tracker, chat, ...) and built-ins such as memory.',
    'Returns tools ranked by how well their name, description, connector and source name match `query`.',
    'Each result has `name` (`<connector>.<tool>`, pass it to execute_connector_tool), `description`, `input_schema` (JSON Schema of its arguments),',
    "`effect` (`read`, or `write` which may need a person's approval) and, for tools of a configured source, `source_id` and `source_name`.",
    'Search with a few keywords of what you want to do (e.g. "open pull requests", "recall user preferences") before executing a tool you have not seen in this conversation.',
    'An empty query lists the tools by name.',
  ].join(' '),
  input_schema: {
    type: 'object',
    properties: {
      query: { type: 'string', maxLength: 500, description: 'keywords describing the action or data you need' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_RESULTS, description: `how many tools to return (default ${DEFAULT_SEARCH_RESULTS})` },
    },
    required: ['query'],
    additionalProperties: false,
  },
};

export const executeConnectorToolDefinition: ToolDefinition = {
  name: EXECUTE_CONNECTOR_TOOL,
  description: [
    'Run one tool found with search_connector_tools.',
    '`tool` is its exact name (`<connector>.<tool>`) and `arguments` an object matching its `input_schema`.',
    'When search returned the same tool name for several sources (different `source_id`), pass the `source_id` of the one you mean.',
    'Returns `{ "result": ... }`, or `{ "error": { "code", "message", "details" } }`:',
    '`unknown_tool` (details.suggestions lists close names), `invalid_arguments` (details.issues lists every failing path: fix all of them and call again),',
    '`ambiguous_tool` / `unknown_source` (details.choices lists the source_id values), `approval_denied` or `approval_timeout` (a person did not allow this write: do not retry it; tell the user),',
    '`cancelled`, `tool_failed`, or a code of the tool itself explained by its message.',
    "Write tools may wait for a person's approval before they run.",
  ].join(' '),
  input_schema: {
    type: 'object',
    properties: {
      tool: { type: 'string', minLength: 1, description: 'the tool name from search results, `<connector>.<tool>`' },
      arguments: { type: 'object', description: "the tool's arguments, matching its input_schema" },
      source_id: { type: 'string', minLength: 1, description: 'which source to use when several offer this tool (from search results)' },
    },
    required: ['tool', 'arguments'],
    additionalProperties: false,
  },
};

/** Both meta-tools, in the order the model is shown them. */
export const META_TOOL_DEFINITIONS: readonly ToolDefinition[] = [searchConnectorToolsDefinition, executeConnectorToolDefinition];

export const isMetaTool = (name: string): name is MetaToolName => name === SEARCH_CONNECTOR_TOOLS || name === EXECUTE_CONNECTOR_TOOL;

/** What search_connector_tools returns to the model. */
export interface SearchConnectorToolsResult {
  readonly tools: readonly ToolSummary[];
  /** present when nothing matched */
  readonly hint?: string;
}

const validateSearchArgs = compileSchema(searchConnectorToolsDefinition.input_schema);
const validateExecuteArgs = compileSchema(executeConnectorToolDefinition.input_schema);

const invalidMetaArguments = (tool: string, issues: readonly { path: string; message: string }[]): ToolErrorBody =>
  toolErrorBody('invalid_arguments', `invalid arguments for ${tool}: ${issues.map((issue) => `${issue.path || '(arguments)'} ${issue.message}`).join('; ')}`, {
    issues,
  });

/** Applies search_connector_tools; the result is JSON-serializable. Never throws. */
export function applySearchConnectorTools(catalog: ToolCatalog, args: unknown): ToolOutcome {
  const checked = validateCopy(validateSearchArgs, args ?? {});
  if (!checked.ok) return failedOutcome(invalidMetaArguments(SEARCH_CONNECTOR_TOOLS, checked.issues));
  const query = checked.value['query'] as string;
  const limit = (checked.value['limit'] as number | undefined) ?? DEFAULT_SEARCH_RESULTS;
  const tools = catalog.search(query, limit);
  const result: SearchConnectorToolsResult =
    tools.length > 0 ? { tools } : { tools, hint: 'no tool matches; try other or fewer keywords, or an empty query to list every tool' };
  return { result };
}

/**
 * First half of execute_connector_tool: checks the meta arguments, finds the
 * tool and validates its arguments. The runtime gates on `effect` next.
 */
export function resolveExecuteConnectorTool(catalog: ToolCatalog, args: unknown): Resolution {
  const checked = validateCopy(validateExecuteArgs, args ?? {});
  if (!checked.ok) return { ok: false, error: invalidMetaArguments(EXECUTE_CONNECTOR_TOOL, checked.issues) };
  const { tool, arguments: toolArgs, source_id: sourceId } = checked.value as { tool: string; arguments: unknown; source_id?: string };
  return catalog.resolve(tool, toolArgs, sourceId);
}

/** Second half of execute_connector_tool, once the runtime allowed the call. Never throws. */
export function runExecuteConnectorTool(catalog: ToolCatalog, resolved: ResolvedToolCall, ctx: RunContext): Promise<ToolOutcome> {
  return catalog.run(resolved, ctx);
}
