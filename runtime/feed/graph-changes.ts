/**
 * The graph store as the change feed sees it: every write that goes through
 * the store (the /graph routes, Cypher writes, tools, connector syncs through
 * `sinkFor`, whatever else is handed this store) publishes one change per
 * node or relationship once the engine has committed it. A Cypher write is
 * one `cypher.write` change: the engine does not say which records it touched;
 * a bulk import is one `graph.imported` change with its counts.
 */
import type { ChangeFeed, FeedChange } from './change-feed.js';
import { nodeId } from '../graph/names.js';
import { scopedSink, type GraphScope, type GraphStore } from '../graph/store.js';

export function observeGraphChanges(store: GraphStore, feed: ChangeFeed): GraphStore {
  const change = (scope: GraphScope, event: string, labels: readonly string[] | null, data: Record<string, unknown>): FeedChange => ({
    topic: 'graph',
    event,
    realm: scope.realm,
    labels,
    data: { realm: scope.realm, ...data },
  });
  const publish = (scope: GraphScope, event: string, labels: readonly string[] | null, data: Record<string, unknown>): void =>
    feed.publish(scope.orgId, change(scope, event, labels, data));

  const observed: GraphStore = {
    engine: store.engine,
    upsertNodes: async (scope, nodes) => {
      const count = await store.upsertNodes(scope, nodes);
      // nothing to build for an organization nobody follows (bulk loads pay nothing)
      if (!feed.watched(scope.orgId)) return count;
      feed.publish(
        scope.orgId,
        nodes.map((node) => {
          const key = node.properties._key;
          return change(scope, 'node.upserted', [node.label], { id: nodeId(node.label, key), label: node.label, key, properties: node.properties });
        }),
      );
      return count;
    },
    upsertRelationships: async (scope, relationships) => {
      const count = await store.upsertRelationships(scope, relationships);
      if (!feed.watched(scope.orgId)) return count;
      feed.publish(
        scope.orgId,
        relationships.map((rel) =>
          change(scope, 'relationship.upserted', [rel.from_label, rel.to_label], {
            type: rel.type,
            from: nodeId(rel.from_label, rel.from_key),
            to: nodeId(rel.to_label, rel.to_key),
            properties: rel.properties ?? {},
          }),
        ),
      );
      return count;
    },
    deleteNode: async (scope, label, key) => {
      const deleted = await store.deleteNode(scope, label, key);
      if (deleted) {
        publish(scope, 'node.deleted', [label], { id: nodeId(label, key), label, key, relationships_deleted: deleted.relationshipsDeleted });
      }
      return deleted;
    },
    cypher: async (scope, query, params, options) => {
      let wrote = false;
      const result = await store.cypher(scope, query, params, { ...options, onWrite: () => void (wrote = true) });
      if (wrote) publish(scope, 'cypher.write', null, {});
      return result;
    },
    // a bulk import is one change (the rows are not listed: a load can hold millions)
    import: async (scope, input) => {
      const result = await store.import(scope, input);
      publish(scope, 'graph.imported', null, { nodes: result.nodes, relationships: result.relationships, method: result.method });
      return result;
    },
    rebuildIndexes: (scope) => store.rebuildIndexes(scope),
    getNode: (scope, label, key) => store.getNode(scope, label, key),
    search: (scope, options) => store.search(scope, options),
    expand: (scope, label, key, options) => store.expand(scope, label, key, options),
    stats: (scope, perLabel) => store.stats(scope, perLabel),
    sinkFor: (orgId, realm) => scopedSink(observed, { orgId, realm }),
    ping: () => store.ping(),
    close: () => store.close(),
  };
  return observed;
}
