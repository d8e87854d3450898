import { describe, expect, it } from 'vitest';
import { createCatalog } from '../../runtime/tools/catalog.js';
import { checkPlugin, createRegistry } from '../../connectors/loader.js';
import {
  applySearchConnectorTools,
  executeConnectorToolDefinition,
  isMetaTool,
  META_TOOL_DEFINITIONS,
  resolveExecuteConnectorTool,
  runExecuteConnectorTool,
  searchConnectorToolsDefinition,
} from '../../runtime/tools/meta-tools.js';
import { acmeCreateIssueEntry, codeHost } from './test-plugins.js';

const catalog = createCatalog(createRegistry([checkPlugin(codeHost, 'built-in')]), {
  sources: [{ id: 'src_acme', kind: 'github', name: 'Acme GitHub', config: { token: 't' } }],
});

describe('meta-tools', () => {
  it('defines search_connector_tools and execute_connector_tool for the model', () => {
    expect(META_TOOL_DEFINITIONS.map((definition) => definition.name)).toEqual(['search_connector_tools', 'execute_connector_tool']);
    expect(searchConnectorToolsDefinition.input_schema).toEqual({
      type: 'object',
      properties: {
        query: { type: 'string', maxLength: 500, description: 'keywords describing the action or data you need' },
        limit: { type: 'integer', minimum: 1, maximum: 25, description: 'how many tools to return (default 8)' },
      },
      required: ['query'],
      additionalProperties: false,
    });
    expect(Object.keys(executeConnectorToolDefinition.input_schema['properties'] as object)).toEqual(['tool', 'arguments', 'source_id']);
    expect(executeConnectorToolDefinition.input_schema['required']).toEqual(['tool', 'arguments']);
    expect(isMetaTool('search_connector_tools')).toBe(true);
    expect(isMetaTool('execute_connector_tool')).toBe(true);
    expect(isMetaTool('github.search_issues')).toBe(false);
  });

  it('searches and returns a JSON-serializable result with names, schemas and effects', () => {
    const outcome = applySearchConnectorTools(catalog, { query: 'open a new issue', limit: 1 });
    expect(JSON.parse(JSON.stringify(outcome))).toEqual({
      result: {
        tools: [acmeCreateIssueEntry],
      },
    });
    expect(applySearchConnectorTools(catalog, { query: 'qqqq' })).toEqual({
      result: { tools: [], hint: 'no tool matches; try other or fewer keywords, or an empty query to list every tool' },
    });
  });

  it('answers invalid_arguments for bad meta-tool arguments, listing each path', () => {
    expect(applySearchConnectorTools(catalog, { limit: 40, extra: true })).toEqual({
      error: {
        code: 'invalid_arguments',
        message: 'invalid arguments for search_connector_tools: query is required; extra is not an accepted property; limit must be <= 25',
        details: {
          issues: [
            { path: 'query', message: 'is required' },
            { path: 'extra', message: 'is not an accepted property' },
            { path: 'limit', message: 'must be <= 25' },
          ],
        },
      },
    });
    expect(resolveExecuteConnectorTool(catalog, { tool: '', arguments: 'x' })).toEqual({
      ok: false,
      error: {
        code: 'invalid_arguments',
        message: 'invalid arguments for execute_connector_tool: tool must NOT have fewer than 1 characters; arguments must be object',
        details: {
          issues: [
            { path: 'tool', message: 'must NOT have fewer than 1 characters' },
            { path: 'arguments', message: 'must be object' },
          ],
        },
      },
    });
  });

  it('executes in two steps: resolve (for the runtime to gate on effect), then run', async () => {
    const resolution = resolveExecuteConnectorTool(catalog, { tool: 'github.create_issue', arguments: { repo: 'acme/api', title: 'Crash on start' } });
    expect(resolution).toMatchObject({ ok: true, effect: 'write', source: { id: 'src_acme', name: 'Acme GitHub' } });
    if (!resolution.ok) return;
    expect(await runExecuteConnectorTool(catalog, resolution, { orgId: 'org_1', signal: new AbortController().signal })).toEqual({
      result: { created: 'Crash on start' },
    });
    const unknown = resolveExecuteConnectorTool(catalog, { tool: 'github.create_isue', arguments: {} });
    expect(unknown.ok ? null : unknown.error.code).toBe('unknown_tool');
  });
});
