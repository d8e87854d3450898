/**
 * The built-in `memory` connector: recall and store the organization's memory
 * entries. Sourceless (no external system), so its tools are in every run.
 */
import type { ConnectorPlugin } from '../contract.js';
import { sourcelessParts } from '../shared/sourceless.js';
import { recallTool } from './tools/recall.js';
import { storeTool } from './tools/store.js';

/** Its tools reach the organization's memory through the `memory` port. */
export function createMemoryPlugin(): ConnectorPlugin {
  return {
    kind: 'memory',
    version: '1.0.0',
    contract: '^1',
    description: "The organization's memory: facts, guidelines, preferences and notes that agents recall and store.",
    ...sourcelessParts('memory'),
    requires: ['memory'],
    tools: [recallTool(), storeTool()],
  };
}
