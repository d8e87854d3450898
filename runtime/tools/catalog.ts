/**
 * The tool catalog of one run: every tool of the loaded plugins, once per
 * source of its kind the run may see (sourceless built-ins such as `memory`
 * are always visible). It searches, resolves (finds the tool, validates the
 * arguments) and runs; it never decides approval: the agent runtime calls
 * `resolve`, gates on `effect`, then calls `run`.
 *
 * Nothing here throws at the model: every failure is a result with
 * `error.code` (see CatalogErrorCode).
 */
import { ToolError, type JsonSchema, type PortName, type ToolContext, type ToolEffect } from '../../connectors/contract.js';
import { bindPorts } from './ports.js';
import { composeInterceptors, type ToolCallInfo, type ToolInterceptor } from './interceptors.js';
import { validateCopy, type SchemaIssue } from './json-schema.js';
import type { LoadedPlugin, LoadedTool, PluginRegistry } from './registry.js';
import { editDistance, rankDocuments, tokenize, type SearchDocument } from './tool-search.js';
import { failedOutcome, toolErrorBody, type ToolErrorBody, type ToolOutcome } from './tool-result.js';

/** A configured source the run may see (the sources resource hands these over, config decrypted). */
export interface CatalogSource {
  readonly id: string;
  /** the connector kind, e.g. `github` */
  readonly kind: string;
  readonly name: string;
  readonly config: Readonly<Record<string, unknown>>;
  /**
   * the source's own tools, for plugins with `listTools` (already checked,
   * named `<source>.<tool>`); when present they replace the plugin's static tools
   */
  readonly tools?: readonly LoadedTool[];
}

/** One visible tool, as the model sees it in search results. */
export interface ToolSummary {
  /** `<kind>.<tool>` */
  readonly name: string;
  readonly description: string;
  readonly input_schema: JsonSchema;
  readonly effect: ToolEffect;
  /** the connector kind */
  readonly connector: string;
  /** present for tools of a source; pass it to execute when several sources offer the same name */
  readonly source_id?: string;
  readonly source_name?: string;
}

interface SourceRef {
  readonly id: string;
  readonly name: string;
}

/** A call that found its tool and passed schema validation; plain data, so it can wait in a transcript for approval. */
export interface ResolvedToolCall {
  readonly ok: true;
  readonly tool: ToolSummary;
  readonly effect: ToolEffect;
  /** validated arguments, schema defaults filled (a copy: the caller's object is untouched) */
  readonly args: Record<string, unknown>;
  readonly source: SourceRef | null;
}

interface ResolveFailure {
  readonly ok: false;
  readonly error: ToolErrorBody;
}

export type Resolution = ResolvedToolCall | ResolveFailure;

export interface RunContext {
  readonly orgId: string;
  /** aborted when the run is cancelled or times out */
  readonly signal: AbortSignal;
  /** who the run acts for; handed to tools as ToolContext.actorId */
  readonly actorId?: string;
  /** the realm the run works in; handed to tools as ToolContext.realm */
  readonly realm?: string;
  /** the agent run; handed to tools as ToolContext.runId (absent outside runs) */
  readonly runId?: string;
}

export interface CatalogOptions {
  /** the sources this run may see; sources of a kind no plugin provides are ignored */
  readonly sources?: readonly CatalogSource[];
  /** wrapped around every tool invocation, first = outermost */
  readonly interceptors?: readonly ToolInterceptor[];
  /** a catalog for callers outside an agent run (the /mcp server): run-only plugins' tools are left out */
  readonly outsideRun?: boolean;
}

export interface ToolCatalog {
  /** every visible tool, sorted by name then source id */
  entries(): readonly ToolSummary[];
  /**
   * Ranked search over tool names, descriptions, connector kinds and source
   * names. A query with no usable words lists tools by name.
   * @param limit at most this many (clamped to 1..100)
   */
  search(query: string, limit?: number): ToolSummary[];
  /**
   * Finds the tool and validates `args` against its input schema. Errors:
   * `unknown_tool` (details.suggestions), `ambiguous_tool` / `unknown_source`
   * (details.choices: `{source_id, source_name}`), `invalid_arguments`
   * (details.issues: `{path, message}` for every failing path).
   */
  resolve(name: string, args: unknown, sourceId?: string): Resolution;
  /**
   * Runs a resolved call with its source's config, through the interceptors.
   * Never throws: ToolError -> its code; abort -> `cancelled`; anything else
   * -> `tool_failed`; a result is returned as `{ result }` (JSON-normalized).
   */
  run(resolved: ResolvedToolCall, ctx: RunContext): Promise<ToolOutcome>;
}

interface Entry extends SearchDocument {
  readonly summary: ToolSummary;
  readonly loaded: LoadedTool;
  readonly source: CatalogSource | null;
  /** the ports its plugin requires (bound per call) */
  readonly requires: readonly PortName[];
  /** the source config with schema defaults, or the issues that make it unusable */
  readonly config: { readonly ok: true; readonly value: Record<string, unknown> } | { readonly ok: false; readonly issues: SchemaIssue[] };
}

const MAX_SEARCH_LIMIT = 100;
const DEFAULT_SEARCH_LIMIT = 10;
const MAX_SUGGESTIONS = 5;
const MAX_FAILURE_MESSAGE = 1000;

/** tokens of the plugin-defined texts, shared by every run's catalog */
const toolTokens = new WeakMap<LoadedTool, { tool: string[]; connector: string[]; description: string[] }>();

function tokensOf(loaded: LoadedTool): { tool: string[]; connector: string[]; description: string[] } {
  let tokens = toolTokens.get(loaded);
  if (!tokens) {
    tokens = { tool: tokenize(loaded.tool.name), connector: tokenize(loaded.connector), description: tokenize(loaded.tool.description) };
    toolTokens.set(loaded, tokens);
  }
  return tokens;
}

function entryOf(plugin: LoadedPlugin, loaded: LoadedTool, source: CatalogSource | null): Entry {
  const summary: ToolSummary = {
    name: loaded.name,
    description: loaded.tool.description,
    input_schema: loaded.tool.input_schema,
    effect: loaded.tool.effect,
    connector: loaded.connector,
    ...(source ? { source_id: source.id, source_name: source.name } : {}),
  };
  const tokens = tokensOf(loaded);
  return {
    name: loaded.name,
    sourceId: source?.id ?? null,
    fields: { ...tokens, source: source ? tokenize(source.name) : [] },
    summary,
    loaded,
    source,
    requires: plugin.requires,
    config: source ? validateCopy(plugin.validateConfig, source.config) : { ok: true, value: {} },
  };
}

const choicesOf = (entries: readonly Entry[]) => entries.map((entry) => ({ source_id: entry.source?.id ?? null, source_name: entry.source?.name ?? null }));

const clip = (text: string): string => (text.length > MAX_FAILURE_MESSAGE ? `${text.slice(0, MAX_FAILURE_MESSAGE)}...` : text);

/** undefined becomes null; anything JSON cannot carry (BigInt, cycles) is a failure */
function jsonNormalized(value: unknown): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (value === undefined) return { ok: true, value: null };
  try {
    const text = JSON.stringify(value);
    return { ok: true, value: text === undefined ? null : JSON.parse(text) };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
}

const cancelled = (): ToolOutcome => failedOutcome(toolErrorBody('cancelled', 'the run was cancelled before the tool finished'));

/** What a throw (from a tool or an interceptor) becomes. */
function outcomeOfThrow(error: unknown, signal: AbortSignal): ToolOutcome {
  const thrown = ToolError.within(error) ?? error;
  if (ToolError.is(thrown)) {
    const details = thrown.details === undefined ? undefined : jsonNormalized(thrown.details);
    const detailsValue = details?.ok && typeof details.value === 'object' && details.value !== null ? (details.value as Record<string, unknown>) : undefined;
    return failedOutcome(toolErrorBody(thrown.code, clip(thrown.message), detailsValue));
  }
  if (signal.aborted) return cancelled();
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return failedOutcome(toolErrorBody('tool_failed', clip(message || 'the tool failed without a message')));
}

type Settled = { readonly kind: 'aborted' } | { readonly kind: 'value'; readonly value: unknown } | { readonly kind: 'thrown'; readonly error: unknown };

/** Settles with the tool's promise, or as `aborted` as soon as the signal aborts (a tool that ignores it is left behind). */
function raceAbort(work: Promise<unknown>, signal: AbortSignal): Promise<Settled> {
  const settled = work.then(
    (value): Settled => ({ kind: 'value', value }),
    (error: unknown): Settled => ({ kind: 'thrown', error }),
  );
  if (signal.aborted) return Promise.resolve({ kind: 'aborted' });
  return new Promise((resolve) => {
    const onAbort = (): void => resolve({ kind: 'aborted' });
    signal.addEventListener('abort', onAbort, { once: true });
    void settled.then((outcome) => {
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    });
  });
}

async function invoke(
  entry: Entry,
  args: Record<string, unknown>,
  config: Record<string, unknown>,
  ctx: RunContext,
  host: Pick<PluginRegistry, 'net' | 'ports'>,
): Promise<ToolOutcome> {
  const { net } = host;
  const toolContext: ToolContext = {
    orgId: ctx.orgId,
    sourceId: entry.source?.id ?? null,
    config,
    signal: ctx.signal,
    ...(ctx.actorId === undefined ? {} : { actorId: ctx.actorId }),
    ...(ctx.realm === undefined ? {} : { realm: ctx.realm }),
    ...(ctx.runId === undefined ? {} : { runId: ctx.runId }),
    ...(net === undefined ? {} : { net }),
    ...(entry.requires.length === 0 ? {} : { ports: bindPorts(host.ports, entry.requires, { orgId: ctx.orgId, realm: ctx.realm }) }),
  };
  let work: Promise<unknown>;
  try {
    work = Promise.resolve(entry.loaded.tool.run(args, toolContext));
  } catch (error) {
    // a non-async run that throws synchronously; mapped here, so interceptors (audit, metrics) always see an outcome
    return outcomeOfThrow(error, ctx.signal);
  }
  const settled = await raceAbort(work, ctx.signal);
  if (settled.kind === 'aborted') return cancelled();
  if (settled.kind === 'thrown') return outcomeOfThrow(settled.error, ctx.signal);
  const normalized = jsonNormalized(settled.value);
  if (!normalized.ok) return failedOutcome(toolErrorBody('tool_failed', `the tool returned a value that is not JSON: ${normalized.reason}`));
  return { result: normalized.value };
}

/** The static tools a source exposes (`visibleTools` of its plugin), or null for all; a hook that throws hides none. */
function visibleToolNames(plugin: LoadedPlugin, source: CatalogSource): ReadonlySet<string> | null {
  if (!plugin.plugin.visibleTools) return null;
  try {
    return new Set(plugin.plugin.visibleTools(source.config));
  } catch {
    return null;
  }
}

/** Builds the catalog of one run. Cheap: plugin-level work (schemas, tokens) is done once at load. */
export function createCatalog(registry: PluginRegistry, options: CatalogOptions = {}): ToolCatalog {
  const interceptors = options.interceptors ?? [];
  const entries: Entry[] = [];
  for (const plugin of registry.plugins) {
    if (plugin.runOnly && options.outsideRun) continue;
    if (plugin.sourceless) {
      for (const tool of plugin.tools) entries.push(entryOf(plugin, tool, null));
      continue;
    }
    for (const source of options.sources ?? []) {
      if (source.kind !== plugin.kind) continue;
      const visible = source.tools === undefined ? visibleToolNames(plugin, source) : null;
      for (const tool of source.tools ?? plugin.tools) {
        if (visible === null || visible.has(tool.tool.name)) entries.push(entryOf(plugin, tool, source));
      }
    }
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : (a.sourceId ?? '') < (b.sourceId ?? '') ? -1 : 1));
  const byName = new Map<string, Entry[]>();
  for (const entry of entries) byName.set(entry.name, [...(byName.get(entry.name) ?? []), entry]);
  const summaries = entries.map((entry) => entry.summary);

  const suggestionsFor = (name: string): string[] => {
    const names = [...byName.keys()];
    const lowered = name.toLowerCase();
    const close = names
      .map((candidate) => ({ candidate, distance: editDistance(lowered, candidate) }))
      .filter(({ candidate, distance }) => distance <= Math.max(2, Math.floor(candidate.length / 3)))
      .sort((a, b) => a.distance - b.distance || (a.candidate < b.candidate ? -1 : 1))
      .map(({ candidate }) => candidate);
    // the words of the tool part only: the connector word alone would suggest every tool of the connector
    const related = rankDocuments(entries, name.slice(name.indexOf('.') + 1), MAX_SUGGESTIONS * 2).map(({ doc }) => doc.name);
    return [...new Set([...close, ...related])].slice(0, MAX_SUGGESTIONS);
  };

  const findEntry = (name: string, sourceId: string | undefined): { entry: Entry } | ResolveFailure => {
    const candidates = byName.get(name);
    if (!candidates) {
      const suggestions = suggestionsFor(name);
      const hint = suggestions.length > 0 ? `; did you mean ${suggestions.join(', ')}?` : '; use search_connector_tools to find tools';
      return { ok: false, error: toolErrorBody('unknown_tool', `no tool named "${name}" is available in this run${hint}`, { suggestions }) };
    }
    const first = candidates[0];
    if (candidates.length === 1 && first && (first.source === null || sourceId === undefined)) return { entry: first };
    if (sourceId === undefined) {
      return {
        ok: false,
        error: toolErrorBody('ambiguous_tool', `${name} is offered by ${candidates.length} sources; pass source_id to choose one`, {
          choices: choicesOf(candidates),
        }),
      };
    }
    const match = candidates.find((entry) => entry.source?.id === sourceId);
    if (match) return { entry: match };
    return {
      ok: false,
      error: toolErrorBody('unknown_source', `source "${sourceId}" does not offer ${name} in this run`, { choices: choicesOf(candidates) }),
    };
  };

  return {
    entries: () => summaries,

    search: (query, limit = DEFAULT_SEARCH_LIMIT) => {
      const bounded = Math.min(Math.max(Math.trunc(limit) || DEFAULT_SEARCH_LIMIT, 1), MAX_SEARCH_LIMIT);
      return rankDocuments(entries, query, bounded).map(({ doc }) => doc.summary);
    },

    resolve: (name, args, sourceId) => {
      const found = findEntry(name, sourceId);
      if ('ok' in found) return found;
      const { entry } = found;
      const checked = validateCopy(entry.loaded.validateArgs, args ?? {});
      if (!checked.ok) {
        const listed = checked.issues.map((issue) => `${issue.path === '' ? '(arguments)' : issue.path} ${issue.message}`).join('; ');
        return { ok: false, error: toolErrorBody('invalid_arguments', `invalid arguments for ${name}: ${listed}`, { issues: checked.issues }) };
      }
      return {
        ok: true,
        tool: entry.summary,
        effect: entry.summary.effect,
        args: checked.value,
        source: entry.source ? { id: entry.source.id, name: entry.source.name } : null,
      };
    },

    run: async (resolved, ctx) => {
      const found = findEntry(resolved.tool.name, resolved.source?.id);
      if ('ok' in found) return failedOutcome(found.error);
      const { entry } = found;
      if (ctx.signal.aborted) return cancelled();
      if (!entry.config.ok) {
        return failedOutcome(
          toolErrorBody('source_misconfigured', `source "${entry.source?.name}" has a config its connector does not accept; fix the source`, {
            issues: entry.config.issues,
          }),
        );
      }
      const config = entry.config.value;
      const call: ToolCallInfo = {
        name: entry.name,
        connector: entry.summary.connector,
        effect: entry.summary.effect,
        args: resolved.args,
        source: resolved.source,
        orgId: ctx.orgId,
        signal: ctx.signal,
        ...(ctx.actorId === undefined ? {} : { actorId: ctx.actorId }),
        ...(ctx.realm === undefined ? {} : { realm: ctx.realm }),
        ...(ctx.runId === undefined ? {} : { runId: ctx.runId }),
      };
      try {
        return await composeInterceptors(interceptors, call, () => invoke(entry, structuredClone(resolved.args), config, ctx, registry));
      } catch (error) {
        return outcomeOfThrow(error, ctx.signal);
      }
    },
  };
}
