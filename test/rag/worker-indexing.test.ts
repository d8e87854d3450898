/**
 * RAG indexing through the worker queue (features rag and workers), against
 * the real server, a real worker process and the fake LLM's embeddings: with
 * no worker on `ingest` a document is indexed in process; with one, the
 * document becomes a `rag_index` job the worker takes and the gateway indexes
 * under its lease (job completed with the document's status and chunks);
 * the worker route refuses a stale fence (409 lease_lost).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/expect-status.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import { useSuite } from '../helpers/suite.js';
import { startWorker, WORKER_TOKEN, WORKERS_ENV, type WorkerProcess } from '../workers/helpers.js';
import { addDocument, createCollection, RUNBOOK, settled } from './helpers.js';

const ctx = useSuite(async (own) => {
  const wired = own(await startWiredOrg({ ...WORKERS_ENV, SERVICE_FEATURES_RAG: 'true' }), stopLlmServer);
  const collection = await createCollection(wired.server, wired.owner, { name: 'runbooks', embedding_model: 'fake-embed-256' });
  return { ...wired, collection };
});

describe('RAG indexing on workers', { timeout: 120_000 }, () => {
  const started: WorkerProcess[] = [];
  afterAll(async () => {
    await Promise.all(started.map((process) => process.kill()));
  });

  it('indexes in process while no worker serves the ingest queue', async () => {
    const { server, owner, collection } = ctx;
    const id = await addDocument(server, owner, collection, { name: 'local.md', content: '# Local\n\nIndexed without a worker.\n' });
    expect(await settled(server, owner, collection, id)).toMatchObject({ status: 'ready', chunk_count: 1 });
    const status = await server.request('GET', '/workers/status', { token: owner.token });
    expect(status.body.queues.ingest).toMatchObject({ depth: 0, inflight: 0 });
  });

  it('queues a rag_index job that a worker takes; the document ends ready and searchable', async () => {
    const { server, owner, collection } = ctx;
    const worker = startWorker(server.url, ['--queues', 'ingest']);
    started.push(worker);
    await worker.logged('worker registered');
    const id = await addDocument(server, owner, collection, { name: 'payments.md', content: RUNBOOK });
    const jobId = String((await worker.logged('job started', { kind: 'rag_index' }))['job_id']);
    expect(jobId).toMatch(new RegExp(`^rag_index\\.${id}\\.[0-9a-f]{16}$`));
    await worker.logged('job completed', { job_id: jobId });
    const document = await settled(server, owner, collection, id);
    expect(document.status, document.reason ?? '').toBe('ready');
    expect(document.chunk_count).toBeGreaterThan(1);
    const found = await server.request('POST', '/rag/search', { token: owner.token, body: { query: 'database disk full', collection, k: 1 } });
    expect(found.body.items[0].document.name).toBe('payments.md');

    const stale = await server.request('POST', `/workers/jobs/${jobId}/rag-index`, { token: WORKER_TOKEN, body: { fence: '999999.9' } });
    expectError(stale, 409, 'lease_lost');
  });
});
