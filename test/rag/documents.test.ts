/**
 * /rag collections and documents against the real server: every format
 * indexed through the fake LLM's /v1/embeddings (deterministic vectors),
 * statuses, failures with reasons, unchanged re-uploads, deletes, the feature
 * flag and organization isolation.
 */
import { describe, expect, it } from 'vitest';
import { expectStatus } from '../helpers/expect-status.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import { useSuite } from '../helpers/suite.js';
import { oneOrg } from '../helpers/orgs.js';
import { wireOrganization } from '../runtime/chat-helpers.js';
import { addDocument, createCollection, onePagePdf, RUNBOOK, settled } from './helpers.js';

const ctx = useSuite(async (own) => {
  const wired = own(await startWiredOrg({ SERVICE_FEATURES_RAG: 'true' }), stopLlmServer);
  const bob = await wireOrganization(wired.server, wired.llm);
  return { server: wired.server, alice: wired.owner, bob: bob.session };
});

describe('/rag collections and documents', () => {
  it('creates a collection with the dimension probed from the model, fixed from then on', async () => {
    const { server, alice } = ctx;
    const created = await server.request('POST', '/rag/collections', { token: alice.token, body: { name: 'probe', embedding_model: 'fake-embed-64' } });
    expectStatus(created, 201).toMatchObject({ name: 'probe', realm: 'default', embedding_model: 'fake-embed-64', dimension: 64, chunk_target_chars: 1200 });
    const defaulted = await server.request('POST', '/rag/collections', { token: alice.token, body: { name: 'default-model' } });
    expectStatus(defaulted, 201).toMatchObject({ embedding_model: 'text-embedding-3-small', dimension: 256 });
    const taken = await server.request('POST', '/rag/collections', { token: alice.token, body: { name: 'probe' } });
    expect(taken.status).toBe(409);
    const badRealm = await server.request('POST', '/rag/collections', { token: alice.token, body: { name: 'x', realm: 'nowhere' } });
    expectStatus(badRealm, 400).toMatchObject({ error: { code: 'validation_error' } });
    const badOverlap = await server.request('POST', '/rag/collections', {
      token: alice.token,
      body: { name: 'y', dimension: 64, chunk_target_chars: 400, chunk_overlap_chars: 300 },
    });
    expect(badOverlap.status).toBe(400);
  });

  it('indexes Markdown, HTML, JSON, NDJSON, PDF and a file-store path; lists them with their status', async () => {
    const { server, alice } = ctx;
    const collection = await createCollection(server, alice, { name: 'formats', embedding_model: 'fake-embed-64', chunk_target_chars: 400 });
    const markdown = await addDocument(server, alice, collection, { name: 'runbook.md', content: RUNBOOK, metadata: { team: 'payments' } });
    const html = await addDocument(server, alice, collection, {
      name: 'page.html',
      content: '<html><head><script>alert(1)</script></head><body><h1>Status page</h1><p>The <b>status page</b> lives at status.example.com.</p></body></html>',
    });
    const json = await addDocument(server, alice, collection, { name: 'service.json', content: JSON.stringify({ service: 'ledger', owner: 'finance' }) });
    const ndjson = await addDocument(server, alice, collection, {
      name: 'tickets.ndjson',
      content: '{"id":1,"title":"login slow"}\n{"id":2,"title":"invoice missing"}\n',
    });
    const pdf = await addDocument(server, alice, collection, {
      name: 'postmortem.pdf',
      content_base64: onePagePdf('Postmortem: the queue consumer leaked memory').toString('base64'),
    });
    const put = await server.request('PUT', '/files/content?path=docs/oncall.txt', {
      token: alice.token,
      body: Buffer.from('On-call handover happens every Monday at 10:00.'),
    });
    expect(put.status).toBe(201);
    const byPath = await server.request('POST', `/rag/collections/${collection}/documents`, { token: alice.token, body: { path: 'docs/oncall.txt' } });
    expectStatus(byPath, 202).toMatchObject({ name: 'docs/oncall.txt', origin: 'file', origin_ref: 'docs/oncall.txt', format: 'text' });

    for (const id of [markdown, html, json, ndjson, pdf, byPath.body.id as string]) {
      const document = await settled(server, alice, collection, id);
      expect(document, document.reason ?? '').toMatchObject({ status: 'ready', reason: null });
      expect(document.chunk_count).toBeGreaterThan(0);
    }
    const md = await settled(server, alice, collection, markdown);
    expect(md).toMatchObject({ format: 'markdown', metadata: { team: 'payments' } });
    expect(md.chunk_count).toBeGreaterThanOrEqual(3);

    const listed = await server.request('GET', `/rag/collections/${collection}/documents?status=ready`, { token: alice.token });
    expectStatus(listed, 200);
    expect(listed.body.items.map((item: { name: string }) => item.name).sort()).toEqual(
      ['docs/oncall.txt', 'page.html', 'postmortem.pdf', 'runbook.md', 'service.json', 'tickets.ndjson'].sort(),
    );

    const search = await server.request('POST', '/rag/search', { token: alice.token, body: { query: 'queue consumer memory leak', collection } });
    expectStatus(search, 200);
    expect(search.body.items[0].document.name).toBe('postmortem.pdf');
    const scripts = await server.request('POST', '/rag/search', { token: alice.token, body: { query: 'alert', collection, mode: 'text' } });
    expect(scripts.body.items).toEqual([]);
  });

  it('fails a document with the reason: unreadable JSON, a dimension mismatch', async () => {
    const { server, alice } = ctx;
    const collection = await createCollection(server, alice, { name: 'failures', embedding_model: 'fake-embed-64' });
    const broken = await addDocument(server, alice, collection, { name: 'broken.json', content: '{"a": ' });
    expect(await settled(server, alice, collection, broken)).toMatchObject({ status: 'failed', chunk_count: 0 });
    expect((await settled(server, alice, collection, broken)).reason).toContain('json document could not be read');

    const mismatched = await createCollection(server, alice, { name: 'mismatch', embedding_model: 'fake-embed-128', dimension: 64 });
    const doc = await addDocument(server, alice, mismatched, { name: 'a.md', content: '# A\n\nsome text' });
    const failed = await settled(server, alice, mismatched, doc);
    expect(failed.status).toBe('failed');
    expect(failed.reason).toMatch(/^embedding_dimension_mismatch: .*dimension 128.*dimension 64/);
    const search = await server.request('POST', '/rag/search', { token: alice.token, body: { query: 'text', collection: mismatched } });
    expectStatus(search, 422).toMatchObject({ error: { code: 'embedding_dimension_mismatch', details: { expected: 64, actual: 128 } } });

    const unknown = await server.request('POST', `/rag/collections/${collection}/documents`, { token: alice.token, body: { name: 'noext', content: 'x' } });
    expect(unknown.status).toBe(400);
    const both = await server.request('POST', `/rag/collections/${collection}/documents`, {
      token: alice.token,
      body: { name: 'a.md', content: 'x', path: 'y' },
    });
    expect(both.status).toBe(400);
  });

  it('leaves an unchanged re-upload alone, re-indexes a changed one, deletes a document with its chunks', async () => {
    const { server, alice } = ctx;
    const collection = await createCollection(server, alice, { name: 'lifecycle', embedding_model: 'fake-embed-64' });
    const id = await addDocument(server, alice, collection, { name: 'notes.md', content: '# Notes\n\nThe cache is redis.' });
    await settled(server, alice, collection, id);
    const again = await server.request('POST', `/rag/collections/${collection}/documents`, {
      token: alice.token,
      body: { name: 'notes.md', content: '# Notes\n\nThe cache is redis.' },
    });
    expectStatus(again, 200).toMatchObject({ id, status: 'ready' });
    const changed = await server.request('POST', `/rag/collections/${collection}/documents`, {
      token: alice.token,
      body: { name: 'notes.md', content: '# Notes\n\nThe cache is memcached.' },
    });
    expectStatus(changed, 202).toMatchObject({ id, status: 'pending' });
    await settled(server, alice, collection, id);
    const hit = await server.request('POST', '/rag/search', { token: alice.token, body: { query: 'memcached', collection, mode: 'text' } });
    expect(hit.body.items).toHaveLength(1);
    const old = await server.request('POST', '/rag/search', { token: alice.token, body: { query: 'redis', collection, mode: 'text' } });
    expect(old.body.items).toHaveLength(0);

    expect((await server.request('DELETE', `/rag/collections/${collection}/documents/${id}`, { token: alice.token })).status).toBe(204);
    const gone = await server.request('POST', '/rag/search', { token: alice.token, body: { query: 'memcached cache', collection } });
    expectStatus(gone, 200);
    expect(gone.body.items).toEqual([]);
    expect((await server.request('GET', `/rag/collections/${collection}/documents/${id}`, { token: alice.token })).status).toBe(404);
    expect((await server.request('DELETE', `/rag/collections/${collection}`, { token: alice.token })).status).toBe(204);
    expect((await server.request('GET', `/rag/collections/${collection}`, { token: alice.token })).status).toBe(404);
  });

  it("keeps organizations apart: another organization's collection is 404 everywhere", async () => {
    const { server, alice, bob } = ctx;
    const collection = await createCollection(server, alice, { name: 'private', embedding_model: 'fake-embed-64' });
    const id = await addDocument(server, alice, collection, { name: 'secret.md', content: '# Secret\n\nThe launch code is swordfish.' });
    await settled(server, alice, collection, id);
    expect((await server.request('GET', `/rag/collections/${collection}`, { token: bob.token })).status).toBe(404);
    expect((await server.request('GET', `/rag/collections/${collection}/documents`, { token: bob.token })).status).toBe(404);
    expect((await server.request('GET', `/rag/collections/${collection}/documents/${id}`, { token: bob.token })).status).toBe(404);
    expect((await server.request('DELETE', `/rag/collections/${collection}/documents/${id}`, { token: bob.token })).status).toBe(404);
    expect((await server.request('POST', `/rag/collections/${collection}/documents`, { token: bob.token, body: { name: 'x.md', content: 'x' } })).status).toBe(
      404,
    );
    expect((await server.request('POST', '/rag/search', { token: bob.token, body: { query: 'launch code', collection } })).status).toBe(404);
    const own = await server.request('POST', '/rag/search', { token: bob.token, body: { query: 'launch code swordfish' } });
    expectStatus(own, 200);
    expect(own.body.items).toEqual([]);
    const listed = await server.request('GET', '/rag/collections', { token: bob.token });
    expect(listed.body.items).toEqual([]);
  });
});

describe('/rag with the feature off', () => {
  const off = useSuite(async (own) => own(await oneOrg(), (started) => started.server.stop()));

  it('answers 404 feature_disabled', async () => {
    const answer = await off.server.request('GET', '/rag/collections', { token: off.owner.token, undocumented: 'feature off' });
    expectStatus(answer, 404).toMatchObject({ error: { code: 'feature_disabled', details: { feature: 'rag' } } });
  });
});
