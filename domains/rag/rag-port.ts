/**
 * The `rag` port of the connector contract: hybrid search bound to the call's
 * organization and realm (a run in realm `ops` sees only `ops` collections;
 * a collection of another realm or organization is `not_found`).
 */
import type { PortScope, RagPort } from '../../connectors/contract.js';
import { asToolErrors } from '../../runtime/tools/ports.js';
import { asOrgId } from '../../runtime/store/types.js';
import { DEFAULT_REALM } from '../../runtime/graph/names.js';
import type { RagSearch } from './search.js';

export function ragPort(search: RagSearch): (scope: PortScope) => RagPort {
  return (scope) => ({
    search: (query) =>
      asToolErrors(async () => {
        const results = await search.search(asOrgId(scope.orgId), {
          query: query.query,
          collection: query.collection,
          realm: scope.realm ?? DEFAULT_REALM,
          k: query.k,
          filters: query.filters === undefined ? undefined : { ...query.filters },
        });
        return results.map((result) => ({
          chunk_id: result.chunk_id,
          score: result.score,
          collection: result.collection.name,
          document: result.document.name,
          heading_path: result.heading_path,
          position: result.position,
          text: result.text,
          metadata: result.document.metadata,
        }));
      }),
  });
}
