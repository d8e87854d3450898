import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCatalog, type ToolCatalog } from '../../runtime/tools/catalog.js';
import { describeConnectorConformance } from '../../connectors/conformance/index.js';
import type { ConnectorPlugin } from '../../connectors/contract.js';
import { loadPlugins } from '../../connectors/loader.js';
import type { PluginRegistry } from '../../runtime/tools/registry.js';
import { applySearchConnectorTools, resolveExecuteConnectorTool } from '../../runtime/tools/meta-tools.js';
import type { ToolOutcome } from '../../runtime/tools/tool-result.js';

/** lists `./echo`, a published-style package folder with its own package.json */
const PLUGINS_FILE = fileURLToPath(new URL('../fixtures/plugins/plugins.json', import.meta.url));

const loadEcho = async (): Promise<ConnectorPlugin> => {
  const echo = (await loadPlugins({ pluginsFile: PLUGINS_FILE })).plugin('echo');
  if (!echo) throw new Error('echo was not loaded');
  return echo.plugin;
};

describe('echo: a third-party plugin listed in plugins.json', () => {
  let registry: PluginRegistry;
  let catalog: ToolCatalog;

  beforeAll(async () => {
    registry = await loadPlugins({ pluginsFile: PLUGINS_FILE });
    catalog = createCatalog(registry, {
      sources: [
        { id: 'src_e1', kind: 'echo', name: 'Echo one', config: { token: 'echo_1' } },
        { id: 'src_e2', kind: 'echo', name: 'Echo two', config: { token: 'echo_2', greeting: 'hi' } },
      ],
    });
  });

  const execute = async (args: unknown, orgId = 'org_echo'): Promise<ToolOutcome> => {
    const resolution = resolveExecuteConnectorTool(catalog, args);
    if (!resolution.ok) return { error: resolution.error };
    return catalog.run(resolution, { orgId, signal: new AbortController().signal });
  };

  it('is loaded from its package folder and checked like a built-in', () => {
    expect(registry.plugins.map((p) => [p.kind, p.origin, p.plugin.version, p.tools.map((t) => `${t.name}:${t.tool.effect}`)])).toEqual([
      ['echo', './echo', '1.2.0', ['echo.say:read', 'echo.remember:write']],
    ]);
  });

  it('is found by the search meta-tool, once per source', () => {
    const outcome = applySearchConnectorTools(catalog, { query: 'echo text back' });
    const tools = 'result' in outcome ? (outcome.result as { tools: { name: string; source_id: string }[] }).tools : [];
    expect(tools.map((tool) => `${tool.name}@${tool.source_id}`)).toEqual([
      'echo.say@src_e1',
      'echo.say@src_e2',
      'echo.remember@src_e1',
      'echo.remember@src_e2',
    ]);
  });

  it('runs its tools per source, with defaults filled', async () => {
    expect(await execute({ tool: 'echo.say', arguments: { text: 'hey', times: 3 }, source_id: 'src_e2' })).toEqual({ result: { said: 'hey hey hey' } });
    expect(await execute({ tool: 'echo.remember', arguments: { note: 'first' }, source_id: 'src_e1' })).toEqual({ result: { notes: ['first'] } });
    expect(await execute({ tool: 'echo.remember', arguments: { note: 'second' }, source_id: 'src_e1' })).toEqual({ result: { notes: ['first', 'second'] } });
    expect(await execute({ tool: 'echo.remember', arguments: { note: 'elsewhere' }, source_id: 'src_e2' })).toEqual({ result: { notes: ['elsewhere'] } });
    expect(await execute({ tool: 'echo.remember', arguments: { note: 'other org' }, source_id: 'src_e1' }, 'org_other')).toEqual({
      result: { notes: ['other org'] },
    });
  });

  it('turns its own branded ToolError (no import of the service) into an error result', async () => {
    expect(await execute({ tool: 'echo.say', arguments: { text: 'x'.repeat(200), times: 10 }, source_id: 'src_e1' })).toEqual({
      error: { code: 'too_long', message: 'the echo is over 1000 characters', details: { length: 2009 } },
    });
  });

  it('asks for a source_id when two echo sources offer the tool', async () => {
    const outcome = await execute({ tool: 'echo.say', arguments: { text: 'hi' } });
    expect('error' in outcome ? [outcome.error.code, outcome.error.details] : null).toEqual([
      'ambiguous_tool',
      {
        choices: [
          { source_id: 'src_e1', source_name: 'Echo one' },
          { source_id: 'src_e2', source_name: 'Echo two' },
        ],
      },
    ]);
  });

  it('validates credentials through validate()', async () => {
    const echo = await loadEcho();
    expect(await echo.validate({ token: 'echo_ok' }, new AbortController().signal)).toEqual({ ok: true });
    expect(await echo.validate({ token: 'stolen' }, new AbortController().signal)).toEqual({
      ok: false,
      message: 'the echo service refused the token',
      details: { reason: 'token_rejected' },
    });
  });
});

describeConnectorConformance(loadEcho, {
  validConfig: { token: 'echo_valid' },
  invalidConfig: { token: 'not-an-echo-token' },
  toolCalls: [
    { tool: 'say', args: { text: 'hello', times: 2 }, expect: { result: { said: 'hello hello' } } },
    { tool: 'say', args: { text: 'y'.repeat(600), times: 2 }, expect: { error_code: 'too_long' } },
    { tool: 'echo.remember', args: { note: 'from the kit' }, expect: { result: { notes: ['from the kit'] } } },
  ],
});
