/**
 * The conformance checks as plain functions (no test framework): each returns
 * the problems it found, empty when the plugin conforms. index.ts wraps them
 * in vitest tests.
 */
import { ToolError, type ConnectorPlugin, type Ports, type ToolContext } from '../contract.js';
import { validateCopy } from '../../runtime/tools/json-schema.js';
import { checkPlugin, createRegistry, PluginLoadError } from '../loader.js';
import type { LoadedPlugin, LoadedTool } from '../../runtime/tools/registry.js';
import { toolErrorBody, type ToolOutcome } from '../../runtime/tools/tool-result.js';

/** The static contract, exactly as the loader checks it. */
export function staticProblems(plugin: unknown, origin = 'conformance'): { loaded?: LoadedPlugin; problems: readonly string[] } {
  try {
    const loaded = checkPlugin(plugin, origin);
    createRegistry([loaded]);
    return { loaded, problems: [] };
  } catch (error) {
    if (error instanceof PluginLoadError) return { problems: error.problems };
    throw error;
  }
}

export async function validateProblems(plugin: ConnectorPlugin, config: Record<string, unknown>, expectOk: boolean): Promise<string[]> {
  let result: unknown;
  try {
    result = await plugin.validate(config, new AbortController().signal);
  } catch (error) {
    return [`validate() threw instead of returning { ok: false, ... }: ${(error as Error).message}`];
  }
  if (typeof result !== 'object' || result === null || typeof (result as { ok?: unknown }).ok !== 'boolean') {
    return ['validate() must resolve to { ok: boolean, details?, message? }'];
  }
  const { ok, details } = result as { ok: boolean; details?: unknown };
  if (expectOk) return ok ? [] : [`validate() refused validConfig: ${JSON.stringify(result)}`];
  if (ok) return ['validate() accepted invalidConfig'];
  if (typeof details !== 'object' || details === null || Object.keys(details).length === 0) {
    return ['validate() refused invalidConfig without details saying what is wrong'];
  }
  return [];
}

export interface SampleContext {
  readonly orgId: string;
  readonly sourceId: string | null;
  readonly config: Record<string, unknown>;
  readonly actorId?: string;
  /** the ports the sample calls get (already bound to `orgId`) */
  readonly ports?: Ports;
}

const contextOf = (sample: SampleContext, signal: AbortSignal): ToolContext => ({
  orgId: sample.orgId,
  sourceId: sample.sourceId,
  config: sample.config,
  signal,
  ...(sample.actorId === undefined ? {} : { actorId: sample.actorId }),
  ...(sample.ports === undefined ? {} : { ports: sample.ports }),
});

const isJsonValue = (value: unknown): boolean => {
  try {
    return JSON.stringify(JSON.parse(JSON.stringify(value))) === JSON.stringify(value) && isPlainJson(value);
  } catch {
    return false;
  }
};

/** only what JSON carries unchanged: no Dates, Maps, class instances, undefined fields, NaN */
function isPlainJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isPlainJson);
  if (typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(value as Record<string, unknown>).every(isPlainJson);
}

/**
 * Runs one sample call. The outcome is what the catalog would give the model;
 * problems: arguments that fail the tool's own schema, a plain throw, a result
 * JSON does not carry unchanged.
 */
export async function sampleCallProblems(
  tool: LoadedTool,
  args: Record<string, unknown>,
  sample: SampleContext,
): Promise<{ outcome?: ToolOutcome; problems: string[] }> {
  const checked = validateCopy(tool.validateArgs, args);
  if (!checked.ok) return { problems: [`sample arguments fail ${tool.name}'s input_schema: ${JSON.stringify(checked.issues)}`] };
  try {
    const result = await tool.tool.run(checked.value, contextOf(sample, new AbortController().signal));
    const value = result === undefined ? null : result;
    if (!isJsonValue(value))
      return { problems: [`${tool.name} returned a value that is not plain JSON (Dates, class instances, undefined fields, NaN are not)`] };
    return { outcome: { result: value }, problems: [] };
  } catch (error) {
    if (ToolError.is(error)) {
      if (!/^[a-z][a-z0-9_]*$/.test(error.code)) return { problems: [`${tool.name} threw a ToolError with code "${error.code}": codes are snake_case`] };
      if (error.details !== undefined && !isJsonValue(error.details)) return { problems: [`${tool.name} threw a ToolError whose details are not plain JSON`] };
      return { outcome: { error: toolErrorBody(error.code, error.message, error.details) }, problems: [] };
    }
    return {
      problems: [`${tool.name} threw a plain ${(error as Error)?.name ?? typeof error} instead of a ToolError: ${(error as Error)?.message ?? String(error)}`],
    };
  }
}

/** With an already aborted signal the tool must reject (ToolError `cancelled`, an AbortError or the signal's reason), not do its work. */
export async function abortProblems(tool: LoadedTool, args: Record<string, unknown>, sample: SampleContext): Promise<string[]> {
  const checked = validateCopy(tool.validateArgs, args);
  if (!checked.ok) return [`sample arguments fail ${tool.name}'s input_schema`];
  const controller = new AbortController();
  controller.abort();
  try {
    await tool.tool.run(checked.value, contextOf(sample, controller.signal));
  } catch (error) {
    const honoured = error === controller.signal.reason || (error as Error)?.name === 'AbortError' || (ToolError.is(error) && error.code === 'cancelled');
    return honoured ? [] : [`${tool.name} rejected an aborted call with something else than an abort: ${(error as Error)?.message ?? String(error)}`];
  }
  return [`${tool.name} ran to completion although its signal was aborted (call ctx.signal.throwIfAborted() before any work and pass ctx.signal on)`];
}
