/**
 * Auto-embed against the real server and the fake LLM's `/v1/embeddings`:
 * with `auto_embed_on_ingest` off nothing is embedded; on, memory entries go
 * to the realm's `_auto.memory.<realm>` collection in the background and
 * `/memory/recall` becomes hybrid (BM25 + vector fused by RRF, both ranks
 * feeding the score); a deleted entry's vectors go with it; ingested rows'
 * `body` text lands in `_auto.ingest.<realm>` and /rag/search finds it.
 */
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { expectStatus } from '../helpers/expect-status.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import { useSuite } from '../helpers/suite.js';
import { createPipeline, ingest, ndjson } from '../ingest/helpers.js';

const ctx = useSuite(async (own) => own(await startWiredOrg({ SERVICE_FEATURES_RAG: 'true' }), stopLlmServer));

const collectionNamed = async (name: string): Promise<{ id: string } | undefined> => {
  const listed = await ctx.server.request('GET', '/rag/collections?limit=100', { token: ctx.owner.token });
  expectStatus(listed, 200);
  return (listed.body.items as { id: string; name: string }[]).find((item) => item.name === name);
};

const readyDocuments = async (collection: string): Promise<{ id: string; name: string; status: string }[]> => {
  const listed = await ctx.server.request('GET', `/rag/collections/${collection}/documents?limit=100`, { token: ctx.owner.token });
  expectStatus(listed, 200);
  return (listed.body.items as { id: string; name: string; status: string }[]).filter((item) => item.status === 'ready');
};

const remember = async (text: string, importance = 0.5): Promise<string> => {
  const created = await ctx.server.request('POST', '/memory', { token: ctx.owner.token, body: { text, importance } });
  expectStatus(created, 201);
  return created.body.id as string;
};

const recall = (query: string) => ctx.server.request('POST', '/memory/recall', { token: ctx.owner.token, body: { query, limit: 5 } });

describe('auto-embed on ingest', { timeout: 120_000 }, () => {
  it('embeds nothing while the setting is off; recall stays text-only', async () => {
    await remember('The payments database disk fills up when WAL archiving stalls.');
    const answer = await recall('payments database disk');
    expectStatus(answer, 200);
    expect(answer.body.items).toHaveLength(1);
    expect(await collectionNamed('_auto.memory.default')).toBeUndefined();
  });

  it('embeds memory entries in the background once on, and recall becomes hybrid', async () => {
    const settings = await ctx.server.request('PATCH', '/settings', {
      token: ctx.owner.token,
      body: { auto_embed_on_ingest: true, embedding_model: 'fake-embed-256' },
    });
    expectStatus(settings, 200);
    const disk = await remember('Rotate the write-ahead log archive when the database disk is full.', 0.9);
    const certs = await remember('Certificates are renewed by cert-manager; delete a failed CertificateRequest.');
    const collection = await eventually(() => collectionNamed('_auto.memory.default'), { what: 'the auto-embed memory collection' });
    await eventually(async () => ((await readyDocuments(collection.id)).length === 2 ? true : undefined), { what: 'two memory entries embedded' });
    const names = (await readyDocuments(collection.id)).map((document) => document.name).sort();
    expect(names).toEqual([disk, certs].sort());

    const answer = await recall('database disk full');
    expectStatus(answer, 200);
    expect(answer.body.items[0].memory.id).toBe(disk);
    // fused: first in both lists, 1/(60 + 1) twice, x (0.5 + importance 0.9)
    expect(answer.body.items[0].score).toBeCloseTo((2 / 61) * 1.4, 4);
    // the unrelated entry shares no word with the query: only the vector list holds it, far below
    const unrelated = answer.body.items.find((item: { memory: { id: string } }) => item.memory.id === certs);
    expect(unrelated.score).toBeLessThan(answer.body.items[0].score / 2);

    // deleted: its vectors go with it, and recall no longer names it
    expectStatus(await ctx.server.request('DELETE', `/memory/${disk}`, { token: ctx.owner.token }), 204);
    expect((await readyDocuments(collection.id)).map((document) => document.name)).toEqual([certs]);
    const after = await recall('database disk full');
    expect(after.body.items.map((item: { memory: { id: string } }) => item.memory.id)).not.toContain(disk);
  });

  it("embeds ingested rows' body text, searchable through /rag/search", async () => {
    const pipeline = await createPipeline(ctx.server, ctx.owner);
    const sent = await ingest(
      ctx.server,
      pipeline.token,
      ndjson([
        { label: 'incident', body: 'Checkout latency spiked after the Redis failover in eu-west-1.' },
        { label: 'incident', body: 'Nightly backup job exceeded its window.' },
        { label: 'metric' },
      ]),
    );
    expect(sent.status, sent.text).toBeLessThan(300);
    const collection = await eventually(() => collectionNamed('_auto.ingest.default'), { what: 'the auto-embed ingest collection' });
    await eventually(async () => ((await readyDocuments(collection.id)).length === 1 ? true : undefined), { what: 'the ingest batch embedded' });
    const found = await ctx.server.request('POST', '/rag/search', {
      token: ctx.owner.token,
      body: { query: 'redis failover latency', collection: '_auto.ingest.default', k: 3 },
    });
    expectStatus(found, 200);
    expect(found.body.items[0].text).toContain('Redis failover');
    expect(found.body.items[0].document.metadata).toMatchObject({ pipeline_id: pipeline.pipelineId });
  });
});
