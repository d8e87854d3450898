/**
 * The `graph` port of the connector contract over the graph store: read-only,
 * bound to the call's organization and realm. What a caller can fix
 * (a malformed node id, oversized params, a write query) reaches the tool as
 * a ToolError with the store's code and message.
 */
import { ToolError, type GraphPort, type PortScope } from '../../connectors/contract.js';
import { DEFAULT_REALM } from './names.js';
import { asToolErrors } from '../tools/ports.js';
import { paramsProblem } from './cypher-params.js';
import { parseNodeId } from './names.js';
import type { GraphScope, GraphStore } from './store.js';

export function graphPort(store: GraphStore): (scope: PortScope) => GraphPort {
  return (call) => {
    const scope: GraphScope = { orgId: call.orgId, realm: call.realm ?? DEFAULT_REALM };
    return {
      search: (options) => asToolErrors(() => store.search(scope, options)),
      getNode: (id) =>
        asToolErrors(async () => {
          const { label, key } = parseNodeId(id);
          return store.getNode(scope, label, key);
        }),
      expand: (id, options) =>
        asToolErrors(async () => {
          const { label, key } = parseNodeId(id);
          return store.expand(scope, label, key, options);
        }),
      cypher: (query, params) =>
        asToolErrors(async () => {
          // bounded before any other work, as the /graph/cypher route does
          const problem = paramsProblem(params);
          if (problem) throw new ToolError('validation_error', problem);
          return store.cypher(scope, query, params, { allowWrite: false });
        }),
    };
  };
}
