/**
 * Connector conformance kit: a third-party author runs it from their own
 * vitest suite against their plugin.
 *
 *   import { describeConnectorConformance } from '<service>/connectors/conformance/index.js';
 *   describeConnectorConformance(plugin, {
 *     validConfig: { token: 'good' }, invalidConfig: { token: 'bad' },
 *     toolCalls: [{ tool: 'say', args: { text: 'hi' }, expect: { result: { said: 'hi' } } }],
 *   });
 *
 * It checks the static contract (the loader's checks), validate() on both
 * configs, every sample call (a JSON result or a ToolError, never a plain
 * throw) and that every tool honours an aborted signal.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ConnectorPlugin, PortOffers } from '../contract.js';
import { bindPorts } from '../../runtime/tools/ports.js';
import type { LoadedPlugin, LoadedTool } from '../../runtime/tools/registry.js';
import type { ToolOutcome } from '../../runtime/tools/tool-result.js';
import { abortProblems, sampleCallProblems, staticProblems, validateProblems, type SampleContext } from './checks.js';

export { abortProblems, sampleCallProblems, staticProblems, validateProblems } from './checks.js';

export interface ConformanceToolCall {
  /** the tool's own name (`say`) or its full name (`echo.say`) */
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /**
   * what the outcome must be: `{ result }` (deep equal), `{ error_code }`, or
   * a function that asserts on it; default: any JSON result or ToolError
   */
  readonly expect?: { readonly result: unknown } | { readonly error_code: string } | ((outcome: ToolOutcome) => void | Promise<void>);
}

export interface ConformanceOptions {
  /** a config validate() accepts; also the ToolContext.config of the sample calls */
  readonly validConfig: Record<string, unknown>;
  /** a config validate() refuses with details; omit only when the plugin takes no config to get wrong */
  readonly invalidConfig?: Record<string, unknown>;
  readonly toolCalls: readonly ConformanceToolCall[];
  /** ToolContext.orgId of the sample calls (a function when it is known only once a beforeAll ran); default `org_conformance` */
  readonly orgId?: string | (() => string);
  /** ToolContext.sourceId of the sample calls; default `src_conformance` (null for sourceless plugins) */
  readonly sourceId?: string | null;
  readonly actorId?: string;
  /** the ports the sample calls get, for a plugin that `requires` some (the service's own, or fakes); bound to `orgId` */
  readonly ports?: PortOffers;
  /** fail when a tool has no sample call (default true) */
  readonly requireSampleForEveryTool?: boolean;
}

type PluginInput = ConnectorPlugin | (() => ConnectorPlugin | Promise<ConnectorPlugin>);

const problemsMessage = (problems: readonly string[]): string => problems.join('\n');

/**
 * Declares a `describe` block of conformance tests. `plugin` may be a
 * function, called in beforeAll, for plugins that need something set up first.
 */
export function describeConnectorConformance(plugin: PluginInput, options: ConformanceOptions): void {
  const label = typeof plugin === 'function' ? 'connector plugin' : `connector plugin ${String((plugin as { kind?: unknown }).kind)}`;
  describe(`${label} conformance`, () => {
    let instance: ConnectorPlugin;
    let loaded: LoadedPlugin | undefined;
    let staticFound: readonly string[] = [];

    beforeAll(async () => {
      instance = typeof plugin === 'function' ? await plugin() : plugin;
      const checked = staticProblems(instance);
      loaded = checked.loaded;
      staticFound = checked.problems;
    });

    const sample = (): SampleContext => {
      const orgId = typeof options.orgId === 'function' ? options.orgId() : (options.orgId ?? 'org_conformance');
      return {
        orgId,
        sourceId: options.sourceId !== undefined ? options.sourceId : instance.sourceless ? null : 'src_conformance',
        config: options.validConfig,
        ...(options.actorId === undefined ? {} : { actorId: options.actorId }),
        ...(options.ports === undefined ? {} : { ports: bindPorts(options.ports, loaded?.requires ?? [], { orgId }) }),
      };
    };

    const requireLoaded = (): LoadedPlugin => {
      if (!loaded) throw new Error(`the plugin fails the static contract:\n${problemsMessage(staticFound)}`);
      return loaded;
    };

    const toolOf = (name: string): LoadedTool => {
      const plugin = requireLoaded();
      const tool = plugin.tools.find((candidate) => candidate.tool.name === name || candidate.name === name);
      if (!tool) throw new Error(`no tool "${name}" in plugin ${plugin.kind} (tools: ${plugin.tools.map((t) => t.tool.name).join(', ')})`);
      return tool;
    };

    it('meets the static contract (kind, version, contract range, tool names, effects, descriptions, schemas)', () => {
      expect(staticFound, problemsMessage(staticFound)).toEqual([]);
    });

    it('validate() accepts validConfig', async () => {
      const problems = await validateProblems(instance, options.validConfig, true);
      expect(problems, problemsMessage(problems)).toEqual([]);
    });

    if (options.invalidConfig === undefined) {
      it.skip('validate() refuses invalidConfig with details (skipped: no invalidConfig given)', () => undefined);
    } else {
      const invalidConfig = options.invalidConfig;
      it('validate() refuses invalidConfig with details', async () => {
        const problems = await validateProblems(instance, invalidConfig, false);
        expect(problems, problemsMessage(problems)).toEqual([]);
      });
    }

    if (options.requireSampleForEveryTool !== false) {
      it('has a sample call for every tool', () => {
        const sampled = new Set(options.toolCalls.map((call) => toolOf(call.tool).name));
        const missing = requireLoaded()
          .tools.filter((tool) => !sampled.has(tool.name))
          .map((tool) => tool.name);
        expect(missing, `tools without a sample call in toolCalls: ${missing.join(', ')}`).toEqual([]);
      });
    }

    options.toolCalls.forEach((call, index) => {
      it(`sample call ${index + 1} (${call.tool}) returns a JSON result or a ToolError`, async () => {
        const { outcome, problems } = await sampleCallProblems(toolOf(call.tool), call.args, sample());
        expect(problems, problemsMessage(problems)).toEqual([]);
        if (!outcome || call.expect === undefined) return;
        if (typeof call.expect === 'function') await call.expect(outcome);
        else if ('error_code' in call.expect) expect('error' in outcome ? outcome.error.code : 'no error (a result)').toBe(call.expect.error_code);
        else expect(outcome).toEqual({ result: call.expect.result });
      });

      it(`sample call ${index + 1} (${call.tool}) honours an aborted signal`, async () => {
        const problems = await abortProblems(toolOf(call.tool), call.args, sample());
        expect(problems, problemsMessage(problems)).toEqual([]);
      });
    });
  });
}
