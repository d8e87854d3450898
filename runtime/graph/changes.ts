/**
 * Graph changes the service itself makes (entity ingests, memory sync), as
 * one small in-process event per write: what a live feed (`/ws`) subscribes
 * to. Emitters never wait for listeners; a listener that throws is logged.
 */
import type { Logger } from 'pino';

export interface GraphChange {
  readonly orgId: string;
  readonly realm: string;
  /** what wrote: an ingest run of a `context_nodes` pipeline, or `POST /memory/sync` */
  readonly source: 'ingest' | 'memory_sync';
  /** the ingest run id, when `source` is `ingest` */
  readonly runId?: number | undefined;
  /** labels of the nodes written or removed, distinct */
  readonly labels: readonly string[];
  /** types of the relationships written or removed, distinct */
  readonly relationshipTypes: readonly string[];
  readonly nodesUpserted: number;
  readonly relationshipsUpserted: number;
  readonly nodesDeleted: number;
  readonly relationshipsDeleted: number;
}

export type GraphChangeListener = (change: GraphChange) => void;

export class GraphChanges {
  private readonly listeners = new Set<GraphChangeListener>();

  constructor(private readonly logger: Logger) {}

  emit(change: GraphChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.logger.error({ err: error, org_id: change.orgId }, 'graph change listener failed');
      }
    }
  }

  /** Returns the unsubscribe function. */
  subscribe(listener: GraphChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
