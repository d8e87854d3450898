/**
 * Document indexing through the worker queue (features `rag` and `workers`):
 * while a live worker serves the `ingest` queue, each document to index is a
 * job there (kind `rag_index`, id `rag_index.<document id>.<content hash>`,
 * payload `{collection_id, document_id}` only); the document's bytes wait in
 * this process's memory, as an agent turn's input does. The worker holding
 * the lease asks the gateway, with its fence, to index it
 * (`POST /workers/jobs/:job_id/rag-index`): extraction, chunking and the
 * chunk store stay where the chunk store lives, and the job's lease, retries,
 * dead letters and queue depth are the worker queue's like any other job.
 * Without a live worker (or once the queue refuses), the document is indexed
 * in process as before. A redelivery after the document was indexed, replaced
 * or deleted, or after a gateway restart (the bytes are gone; the document
 * was then marked failed at start), completes as `{abandoned: true}`.
 */
import type { Logger } from 'pino';
import type { IndexJob } from './indexer.js';
import type { RagService } from './service.js';
import type { WorkerService } from '../workers/service.js';
import { ServiceError } from '../../runtime/errors.js';

const RAG_INDEX_KIND = 'rag_index';

export interface RagIndexResult {
  readonly document_id: string;
  readonly status: string;
  readonly chunk_count: number;
  readonly abandoned: boolean;
}

export class QueuedIndexing {
  /** job id -> what it indexes, while the job waits for a worker */
  private readonly waiting = new Map<string, IndexJob>();

  private constructor(
    private readonly rag: RagService,
    private readonly workers: Pick<WorkerService, 'hasWorkerFor' | 'queue' | 'requireLease'>,
    private readonly logger: Logger,
  ) {}

  /** the route's side; with `enabled` (features rag and workers) the indexer dispatches through it */
  static open(rag: RagService, workers: Pick<WorkerService, 'hasWorkerFor' | 'queue' | 'requireLease'>, enabled: boolean, logger: Logger): QueuedIndexing {
    const queued = new QueuedIndexing(rag, workers, logger);
    if (enabled) rag.indexer.dispatchThrough(queued.dispatch);
    return queued;
  }

  /** the indexer's dispatcher: true when the job went to the queue */
  private readonly dispatch = (job: IndexJob): boolean => {
    if (!this.workers.hasWorkerFor('ingest')) return false;
    const id = `${RAG_INDEX_KIND}.${job.document.id}.${job.document.content_hash.slice(0, 16)}`;
    this.waiting.set(id, job);
    this.workers.queue
      .enqueue({ id, queue: 'ingest', orgId: job.org, kind: RAG_INDEX_KIND, payload: { collection_id: job.collection.id, document_id: job.document.id } })
      .catch((error: unknown) => {
        // the queue refused: index here rather than leave the document pending
        this.logger.warn({ err: error, document: job.document.id }, 'rag index job not queued; indexing in process');
        this.waiting.delete(id);
        this.rag.indexer.indexNow(job).catch(() => undefined);
      });
    return true;
  };

  /** the indexing of a leased job, here where the chunk store lives; a stale fence is `lease_lost` before anything runs */
  async perform(jobId: string, fence: string): Promise<RagIndexResult> {
    const info = await this.workers.requireLease(jobId, fence);
    if (info.kind !== RAG_INDEX_KIND) throw new ServiceError('not_found', `job ${jobId} is not a rag index job`);
    const documentId = String(info.payload['document_id']);
    const job = this.waiting.get(jobId);
    if (job === undefined) return { document_id: documentId, status: 'unknown', chunk_count: 0, abandoned: true };
    await this.rag.indexer.indexNow(job);
    this.waiting.delete(jobId);
    const after = await this.rag.getDocument(job.org, job.collection.id, job.document.id).catch(() => null);
    return { document_id: documentId, status: after?.status ?? 'deleted', chunk_count: after?.chunk_count ?? 0, abandoned: false };
  }
}
