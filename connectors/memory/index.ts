/**
 * The built-in `memory` connector: recall and store the organization's memory
 * entries. Sourceless (no external system), so its tools are in every run.
 */
import type { ConnectorPlugin } from '../contract.js';
import { sourcelessParts } from '../shared/sourceless.js';
import type { MemoryPluginStores } from './stores.js';
import { recallTool } from './tools/recall.js';
import { storeTool } from './tools/store.js';

export type { MemoryPluginStores } from './stores.js';

/** Builds the plugin over the service's metadata collections (pass `services.collections`). */
export function createMemoryPlugin(collections: MemoryPluginStores): ConnectorPlugin {
  return {
    kind: 'memory',
    version: '1.0.0',
    contract: '^1',
    description: "The organization's memory: facts, guidelines, preferences and notes that agents recall and store.",
    ...sourcelessParts('memory'),
    tools: [recallTool(collections), storeTool(collections)],
  };
}
