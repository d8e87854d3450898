/**
 * The `memory` port of the connector contract over the metadata store: the
 * organization's memory entries, bound to the call's organization, ranked
 * by the same recall as `POST /memory/recall`.
 */
import type { MemoryEntry, MemoryPort, PortScope } from '../../connectors/contract.js';
import type { Collections } from '../collections.js';
import type { MemoryDoc } from './documents.js';
import { asOrgId } from '../../runtime/store/types.js';
import { recallMemories } from './recall.js';

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

export function memoryPort(collections: Pick<Collections, 'memory' | 'realms'>): (scope: PortScope) => MemoryPort {
  return (call) => {
    const org = asOrgId(call.orgId);
    return {
      realmExists: async (realm) => (await collections.realms.findOne(org, { name: realm })) !== null,
      recall: async (query) => (await recallMemories(collections.memory, org, query)).map(({ doc, score }) => ({ entry: entryOf(doc), score })),
      store: async (entry) => entryOf(await collections.memory.insert(org, entry)),
    };
  };
}
