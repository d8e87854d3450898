/**
 * Tools of sources whose connector lists them per source (`listTools`, e.g.
 * an MCP server). Asked when a run's catalog is built and cached per source
 * for a TTL, so a conversation does not reconnect to the server at every
 * message; a changed source (new `updated_at`) is asked again at once.
 */
import type { Logger } from 'pino';
import type { NetPort } from '../../connectors/contract.js';
import type { LoadedPlugin, LoadedTool } from '../../runtime/tools/registry.js';
import { checkDynamicTools } from '../../runtime/tools/tool-checks.js';

/** @default how long a listed tool set is reused */
export const DYNAMIC_TOOLS_TTL_MS = 60_000;
/** a failed listing is retried sooner than a good one is refreshed */
const FAILURE_TTL_MS = 5_000;
/** a server that does not answer the listing in time contributes no tools to this run */
const LIST_TIMEOUT_MS = 15_000;

/** `My Server` -> `my_server`: the prefix of a source's tools (`<source>.<tool>`) */
function toolPrefixOf(sourceName: string): string {
  const slug = sourceName
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return /^[a-z]/.test(slug) ? slug : `s_${slug}`;
}

interface CacheEntry {
  readonly version: string;
  readonly expiresAt: number;
  readonly tools: Promise<readonly LoadedTool[]>;
}

export class DynamicToolCache {
  private readonly entries = new Map<string, CacheEntry>();

  constructor(
    private readonly logger: Logger,
    private readonly ttlMs = DYNAMIC_TOOLS_TTL_MS,
    // wall clock: the default of callers without a runtime clock (tests of the cache alone)
    private readonly now: () => number = Date.now,
  ) {}

  /** The source's tools (checked, named `<source>.<tool>`); a listing that fails yields none and is logged. */
  tools(
    plugin: LoadedPlugin,
    source: { id: string; name: string; updated_at: string },
    config: Readonly<Record<string, unknown>>,
    net?: NetPort,
  ): Promise<readonly LoadedTool[]> {
    const version = `${source.updated_at}\u0000${source.name}`;
    const cached = this.entries.get(source.id);
    if (cached && cached.version === version && cached.expiresAt > this.now()) return cached.tools;
    const tools = this.list(plugin, source, config, net);
    this.entries.set(source.id, { version, expiresAt: this.now() + this.ttlMs, tools });
    return tools;
  }

  forget(sourceId: string): void {
    this.entries.delete(sourceId);
  }

  private async list(
    plugin: LoadedPlugin,
    source: { id: string; name: string },
    config: Readonly<Record<string, unknown>>,
    net: NetPort | undefined,
  ): Promise<readonly LoadedTool[]> {
    if (!plugin.plugin.listTools) return plugin.tools;
    try {
      const listed = await plugin.plugin.listTools(config, AbortSignal.timeout(LIST_TIMEOUT_MS), net);
      const checked = checkDynamicTools(toolPrefixOf(source.name), plugin.kind, Array.isArray(listed) ? listed : []);
      if (checked.problems.length > 0) {
        this.logger.warn({ source_id: source.id, connector: plugin.kind, problems: checked.problems }, 'tools of a source left out');
      }
      return checked.tools;
    } catch (error) {
      this.logger.warn({ source_id: source.id, connector: plugin.kind, err: error }, 'listing the tools of a source failed');
      const entry = this.entries.get(source.id);
      // retry soon rather than hiding the source's tools for the whole TTL
      if (entry) this.entries.set(source.id, { ...entry, expiresAt: this.now() + FAILURE_TTL_MS });
      return [];
    }
  }
}
