/**
 * Hybrid retrieval against the real server: vector + BM25 fused by RRF, the
 * heading path and snippet of each chunk, metadata filters, MMR, realm scope;
 * the `rag.search` tool in a chat run whose answer cites the chunk it used;
 * and the embeddings adapter's 429 + Retry-After retry on the operator's
 * EMBEDDING_BASE_URL.
 */
import { describe, expect, it } from 'vitest';
import { startFakeEmbeddingsServer } from '../fakes/embeddings/server.js';
import { expectStatus } from '../helpers/expect-status.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import { oneOrg } from '../helpers/orgs.js';
import { useSuite } from '../helpers/suite.js';
import { execute, send, streamedText } from '../runtime/chat-helpers.js';
import { addDocument, createCollection, RUNBOOK, settled } from './helpers.js';

const ctx = useSuite(async (own) => {
  const wired = own(await startWiredOrg({ SERVICE_FEATURES_RAG: 'true' }, { approvalWrite: 'allow' }), stopLlmServer);
  const { server, owner } = wired;
  const collection = await createCollection(server, owner, { name: 'runbooks', embedding_model: 'fake-embed-256', chunk_target_chars: 400 });
  const documents = [
    await addDocument(server, owner, collection, { name: 'payments.md', content: RUNBOOK, metadata: { team: 'payments' } }),
    await addDocument(server, owner, collection, {
      name: 'search.md',
      content: '# Search runbook\n\n## Disk full on the search nodes\n\nWhen a search node disk is full, raise the watermark and delete old indices.\n',
      metadata: { team: 'search' },
    }),
    await addDocument(server, owner, collection, {
      name: 'deploys.md',
      content: '# Deploys\n\nDeploys happen on Tuesdays after the change board. Roll back with the previous image tag.\n',
      metadata: { team: 'platform' },
    }),
  ];
  for (const id of documents) expect((await settled(server, owner, collection, id)).status).toBe('ready');
  const realm = await server.request('POST', '/realms', { token: owner.token, body: { name: 'ops' } });
  expect(realm.status).toBe(201);
  const opsCollection = await createCollection(server, owner, { name: 'ops-notes', realm: 'ops', embedding_model: 'fake-embed-256' });
  const opsDoc = await addDocument(server, owner, opsCollection, { name: 'ops.md', content: '# Ops\n\nThe database disk alarm pages the ops realm only.' });
  await settled(server, owner, opsCollection, opsDoc);
  return { ...wired, collection };
});

const search = (body: Record<string, unknown>) => ctx.server.request('POST', '/rag/search', { token: ctx.owner.token, body });

describe('POST /rag/search', () => {
  it('ranks the passage that answers first, with its document, heading path, snippet and both ranks', async () => {
    const answer = await search({ query: 'the database disk is full, what do I delete?', collection: ctx.collection, k: 3 });
    expectStatus(answer, 200);
    const [top] = answer.body.items;
    expect(top).toMatchObject({
      document: { name: 'payments.md', metadata: { team: 'payments' } },
      heading_path: ['Payments runbook', 'Disk full on the database host'],
      collection: { name: 'runbooks' },
    });
    expect(top.vector_rank).not.toBeNull();
    expect(top.text_rank).not.toBeNull();
    expect(top.snippet).toContain('disk');
    expect(top.chunk_id).toMatch(/^chk_\d+$/);
    expect(answer.body.items.length).toBeLessThanOrEqual(3);
    const scores = answer.body.items.map((item: { score: number }) => item.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('filters on document metadata, searches by realm, and answers vector- or text-only', async () => {
    const filtered = await search({ query: 'disk full', filters: { team: 'search' } });
    expectStatus(filtered, 200);
    expect(filtered.body.items.length).toBeGreaterThan(0);
    expect(filtered.body.items.every((item: { document: { name: string } }) => item.document.name === 'search.md')).toBe(true);
    const none = await search({ query: 'disk full', filters: { team: 'nobody' } });
    expect(none.body.items).toEqual([]);

    const inOps = await search({ query: 'database disk alarm', realm: 'ops' });
    expect(inOps.body.items.map((item: { document: { name: string } }) => item.document.name)).toEqual(['ops.md']);
    const inDefault = await search({ query: 'database disk alarm' });
    expect(inDefault.body.items.map((item: { document: { name: string } }) => item.document.name)).not.toContain('ops.md');
    const wrongRealm = await search({ query: 'x', collection: ctx.collection, realm: 'ops' });
    expect(wrongRealm.status).toBe(404);

    const vector = await search({ query: 'roll back a deploy', collection: 'runbooks', mode: 'vector', k: 1 });
    expect(vector.body.items[0]).toMatchObject({ document: { name: 'deploys.md' }, text_rank: null });
    const text = await search({ query: 'watermark', collection: 'runbooks', mode: 'text' });
    expect(text.body.items[0]).toMatchObject({ document: { name: 'search.md' }, vector_rank: null });
    const mmr = await search({ query: 'disk full', collection: ctx.collection, k: 2, mmr: true });
    expectStatus(mmr, 200);
    expect(mmr.body.items).toHaveLength(2);
    expect(new Set(mmr.body.items.map((item: { chunk_id: string }) => item.chunk_id)).size).toBe(2);

    const bad = await search({ query: '', collection: ctx.collection });
    expect(bad.status).toBe(400);
    const tooMany = await search({ query: 'x', k: 51 });
    expect(tooMany.status).toBe(400);
  });

  it('the rag.search tool serves a chat run in its realm, and the answer cites the chunks it used', async () => {
    const { server, llm, org } = ctx;
    const expected = await search({ query: 'database disk full', k: 1 });
    const cited = expected.body.items[0].chunk_id as string;
    llm.script([
      { tool_calls: [{ id: 'call_rag', ...execute('rag.search', { query: 'database disk full', k: 3 }) }] },
      { text: `Rotate the WAL archive: delete archived segments older than seven days, never pg_wal itself [${cited}].` },
    ]);
    const stream = await send(server, org, 'The payments database disk is full. What do I do?');
    await stream.ended;
    const result = stream.events.find((event) => event.event === 'tool_result');
    const items = result?.data.result.result.items as { chunk_id: string; document: string; heading_path: string[] }[];
    expect(items[0]).toMatchObject({ chunk_id: cited, document: 'payments.md', heading_path: ['Payments runbook', 'Disk full on the database host'] });
    expect(items.map((item) => item.document)).not.toContain('ops.md');
    // what the model was given holds the chunk its answer cites
    const sent = llm.requests.at(-1)?.body?.['messages'] as { role: string; content: string }[];
    const toolMessage = sent.filter((message) => message.role === 'tool').at(-1);
    expect(toolMessage?.content).toContain(cited);
    expect(streamedText(stream.events)).toContain(`[${cited}]`);
  });
});

describe('embeddings on the operator endpoint', () => {
  const world = useSuite(async (own) => {
    const embeddings = own(await startFakeEmbeddingsServer());
    const started = own(await oneOrg({ SERVICE_FEATURES_RAG: 'true', EMBEDDING_BASE_URL: embeddings.baseUrl, EMBEDDING_API_KEY: embeddings.apiKey }), (it) =>
      it.server.stop(),
    );
    return { embeddings, ...started };
  });

  it('retries a 429 after its Retry-After and batches texts', async () => {
    const { server, owner, embeddings } = world;
    embeddings.throttle.next(1, 0);
    const collection = await createCollection(server, owner, { name: 'throttled', embedding_model: 'fake-embed-32' });
    expect(embeddings.calls.requests).toBe(2);
    const long = Array.from({ length: 150 }, (_, index) => `Paragraph ${index} about service number ${index}.`).join('\n\n');
    const id = await addDocument(server, owner, collection, { name: 'many.txt', content: long });
    const document = await settled(server, owner, collection, id);
    expect(document.status, document.reason ?? '').toBe('ready');
    // one request per 64 texts (plus the probe and the retried probe)
    expect(embeddings.calls.requests).toBe(2 + Math.ceil(document.chunk_count / 64));
  });
});
