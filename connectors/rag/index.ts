/**
 * The built-in `rag` connector (feature `rag`): hybrid search over the RAG
 * collections of the run's realm. Sourceless, so its tool is in every run
 * while the feature is on.
 */
import type { ConnectorPlugin } from '../contract.js';
import { sourcelessParts } from '../shared/sourceless.js';
import { searchTool } from './tools/search.js';

/** Its tool reaches the collections through the `rag` port, bound to the call's organization and realm. */
export function createRagPlugin(): ConnectorPlugin {
  return {
    kind: 'rag',
    version: '1.0.0',
    contract: '^1',
    description: "The organization's documents (runbooks, READMEs, postmortems, tickets) indexed for retrieval.",
    ...sourcelessParts('rag'),
    requires: ['rag'],
    tools: [searchTool()],
  };
}
