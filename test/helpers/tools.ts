/**
 * Runs a connector's tools the way the catalog hands them over: arguments
 * checked against the tool's input schema with defaults filled, then `run`
 * with a tool context for `config` (read at call time, so a suite can fill
 * in its fake's url in beforeAll).
 */
import {
  ToolError,
  type ConnectorPlugin,
  type ConnectorTool,
  type GraphNodeInput,
  type GraphRelationshipInput,
  type GraphSink,
  type SyncContext,
} from '../../connectors/contract.js';
import { validateCopy } from '../../runtime/tools/json-schema.js';
import { checkPlugin } from '../../connectors/loader.js';
import type { LoadedPlugin } from '../../runtime/tools/registry.js';
import { useSuite } from './suite.js';
import { describeConnectorConformance, type ConformanceOptions } from '../../connectors/conformance/index.js';

export interface ToolHarness {
  readonly loaded: LoadedPlugin;
  /** the tool and its arguments as the catalog would pass them; throws when they fail the schema */
  readonly argsFor: (name: string, args: Record<string, unknown>) => { tool: ConnectorTool; args: Record<string, unknown> };
  /** the suite's config with `overrides` on top */
  readonly config: (overrides?: Record<string, unknown>) => Record<string, unknown>;
  readonly run: (name: string, args: Record<string, unknown>, config?: Record<string, unknown>) => Promise<any>;
  /** a sync's context writing to `graph` (null: a source without a graph), keeping each progress fraction reported */
  readonly syncContext: (graph: GraphSink | null, config?: Record<string, unknown>) => SyncContext & { readonly progressed: number[] };
}

function toolHarness(plugin: ConnectorPlugin, config: Record<string, unknown>): ToolHarness {
  const loaded = checkPlugin(plugin, 'test');
  const harness: ToolHarness = {
    loaded,
    argsFor: (name, args) => {
      const found = loaded.tools.find((candidate) => candidate.tool.name === name);
      if (!found) throw new Error(`no tool ${name}`);
      const checked = validateCopy(found.validateArgs, args);
      if (!checked.ok) throw new Error(`arguments fail the schema: ${JSON.stringify(checked.issues)}`);
      return { tool: found.tool, args: checked.value };
    },
    config: (overrides = {}) => ({ ...config, ...overrides }),
    run: (name, args, cfg = harness.config()) => {
      const call = harness.argsFor(name, args);
      return call.tool.run(call.args, { orgId: 'org_1', sourceId: 'src_1', config: cfg, signal: new AbortController().signal });
    },
    syncContext: (graph, cfg = harness.config()) => {
      const progressed: number[] = [];
      return {
        orgId: 'org_1',
        sourceId: 'src_1',
        realm: 'default',
        config: cfg,
        signal: new AbortController().signal,
        graph,
        progress: (fraction) => progressed.push(fraction),
        progressed,
      };
    },
  };
  return harness;
}

/** The ToolError a call fails with; any other outcome fails the test. */
export async function failureOf(promise: Promise<unknown>): Promise<ToolError> {
  try {
    await promise;
  } catch (error) {
    if (ToolError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a ToolError');
}

/** A GraphSink that keeps every write in order, repeats included (a port stand-in, not code under test). */
export class ListGraphSink implements GraphSink {
  readonly nodes: GraphNodeInput[] = [];
  readonly relationships: GraphRelationshipInput[] = [];
  async upsertNodes(nodes: readonly GraphNodeInput[]): Promise<void> {
    this.nodes.push(...nodes);
  }
  async upsertRelationships(relationships: readonly GraphRelationshipInput[]): Promise<void> {
    this.relationships.push(...relationships);
  }
}

/**
 * A connector's fake for the whole file: started in beforeAll (seeded by
 * `start`), stopped in afterAll, and each config's `urlKey` pointed at it once
 * it listens (the conformance kit reads the configs at test time).
 */
function useFake<F extends { readonly url: string; stop(): Promise<void> }>(
  start: () => Promise<F>,
  urlKey: string,
  ...configs: Record<string, unknown>[]
): { fake: F } {
  return useSuite(async (own) => {
    const fake = own(await start());
    for (const config of configs) config[urlKey] = fake.url;
    return { fake };
  });
}

/** The start of a connector's suite against its fake: `useFake` (as `ctx`) and the `toolHarness` over `validConfig`. */
export function fakeConnector<F extends { readonly url: string; stop(): Promise<void> }>(
  plugin: ConnectorPlugin,
  start: () => Promise<F>,
  urlKey: string,
  validConfig: Record<string, unknown>,
  invalidConfig: Record<string, unknown>,
): ToolHarness & { readonly ctx: { fake: F }; readonly conformance: (options: Omit<ConformanceOptions, 'validConfig' | 'invalidConfig'>) => void } {
  const conformance = (options: Omit<ConformanceOptions, 'validConfig' | 'invalidConfig'>) =>
    describeConnectorConformance(plugin, { validConfig, invalidConfig, ...options });
  return { ...toolHarness(plugin, validConfig), ctx: useFake(start, urlKey, validConfig, invalidConfig), conformance };
}

/** The ToolError `call` fails with when the fake answers its next request 429 with Retry-After 3600. */
export function failureWhenThrottled(fake: { rateLimitNext(count: number, retryAfterSecs: number): void }, call: () => Promise<unknown>): Promise<ToolError> {
  fake.rateLimitNext(1, 3600);
  return failureOf(call());
}
