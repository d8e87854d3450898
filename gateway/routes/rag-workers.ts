/**
 * The worker route of RAG indexing on the worker queue (features `rag` and
 * `workers`; domains/rag/queued-indexing.ts): the worker holding a
 * `rag_index` job's lease asks the gateway to index the document where the
 * chunk store lives.
 */
import { z } from 'zod';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { fenceBody, workerJobParams } from './worker-jobs.js';

const indexSchema = z.object({ document_id: z.string(), status: z.string(), chunk_count: z.number().int(), abandoned: z.boolean() });

export function ragWorkerRoutes({ ragQueuedIndexing }: Services): AnyRoute[] {
  return [
    route({
      method: 'POST',
      path: '/workers/jobs/:job_id/rag-index',
      tag: 'workers',
      auth: 'worker',
      feature: 'workers',
      audit: false,
      summary:
        "Index a leased rag_index job's document in the gateway, where the chunk store lives (WORKER_TOKEN); abandoned when the document is no longer waiting; 409 lease_lost when the fence is stale",
      params: workerJobParams,
      body: fenceBody,
      response: indexSchema,
      errors: [409],
      handler: async ({ params, body }) => ({ status: 200, json: await ragQueuedIndexing.perform(params.job_id, body.fence) }),
    }),
  ];
}
