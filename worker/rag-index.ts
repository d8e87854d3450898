/**
 * Kind `rag_index` (queue `ingest`): a RAG document to index (features `rag`
 * and `workers`). The chunk store is embedded in the gateway, so the worker
 * holds the lease (renewed by the loop meanwhile) and asks the gateway to
 * index the document with its fence; the answer (the document's status and
 * chunk count, or `abandoned` when it no longer waits) is the job's result.
 */
import type { JobHandler } from './handlers.js';

export const ragIndexHandler: JobHandler = (job, context) =>
  context.client.post<Record<string, unknown>>(`/workers/jobs/${encodeURIComponent(job.id)}/rag-index`, { fence: job.fence }, context.signal);
