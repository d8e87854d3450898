/**
 * The `memory` port of the connector contract over the memory service: the
 * organization's memory entries, bound to the call's organization. Recall and
 * store are the service's own (what `POST /memory/recall` and `POST /memory`
 * call), so the `memory.recall` tool is hybrid whenever the route is and an
 * entry the `memory.store` tool saves is auto-embedded like any other.
 */
import type { MemoryEntry, MemoryPort, PortScope } from '../../connectors/contract.js';
import type { MemoryDoc } from './documents.js';
import type { MemoryService } from './service.js';
import { asOrgId } from '../../runtime/store/types.js';

// the contract spells the memory kinds out in plain terms: entryOf and store's insert type-check that both lists agree
const entryOf = (doc: MemoryDoc): MemoryEntry => ({
  id: doc.id,
  kind: doc.kind,
  realm: doc.realm,
  title: doc.title,
  text: doc.text,
  tags: doc.tags,
  importance: doc.importance,
  created_at: doc.created_at,
});

export function memoryPort(memory: Pick<MemoryService, 'realmExists' | 'recall' | 'create'>): (scope: PortScope) => MemoryPort {
  return (call) => {
    const org = asOrgId(call.orgId);
    return {
      realmExists: (realm) => memory.realmExists(org, realm),
      recall: async (query) => (await memory.recall(org, query)).map(({ doc, score }) => ({ entry: entryOf(doc), score })),
      store: async ({ created_by, ...fields }) => entryOf(await memory.create(org, created_by, fields)),
    };
  };
}
