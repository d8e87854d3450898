/**
 * What an author's `conformance.config.(ts|js)` exports (default export):
 * the options, or a function (may be async) that sets things up (a fake of
 * the system) and returns them, with an optional `teardown`.
 */
import type { ConformanceToolCall } from './run.js';

export interface ConformanceRunOptions {
  /** a config validate() accepts; also the ToolContext.config of the sample calls */
  readonly validConfig: Record<string, unknown>;
  /** a config validate() refuses with details; omit only when the plugin takes no config to get wrong */
  readonly invalidConfig?: Record<string, unknown>;
  /** at least one per tool */
  readonly toolCalls: readonly ConformanceToolCall[];
  readonly orgId?: string;
  readonly sourceId?: string | null;
  /** called once the checks ran (stop your fake here) */
  readonly teardown?: () => void | Promise<void>;
}

export type ConformanceConfig = ConformanceRunOptions | (() => ConformanceRunOptions | Promise<ConformanceRunOptions>);
