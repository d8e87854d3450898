/**
 * A RAG collection fed by a GitHub source, against the real server, the fake
 * GitHub (git trees and blobs, as the official client reads them) and the
 * fake LLM's embeddings: the first sync adds every Markdown file of the
 * source's repositories; a re-sync reads no blob whose git sha is unchanged;
 * a changed file is re-indexed, a removed one deleted, a new one added, and
 * search sees the new text. Refusals: no source, a connector without
 * documents, bad credentials (422 `rag_sync_failed`), and the egress guard
 * (422 `egress_refused` when GitHub's address is not opened).
 */
import { describe, expect, it } from 'vitest';
import { startFakeGithub, type FakeGithub } from '../fakes/github/server.js';
import { eventually } from '../helpers/eventually.js';
import { expectStatus } from '../helpers/expect-status.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { useSuite } from '../helpers/suite.js';
import { createCollection, RUNBOOK } from './helpers.js';

const TOKEN = 'ghp_docs_token_0001';

function seedDocs(fake: FakeGithub): void {
  fake.tokens.set(TOKEN, { login: 'docs-bot', scopes: 'repo, read:org' });
  fake.orgs.add('acme');
  fake.repos.push({ owner: 'acme', name: 'api' }, { owner: 'acme', name: 'web', default_branch: 'trunk' });
  fake.files.set('acme/api', {
    'README.md': '# API\n\nThe API serves checkout and refunds.\n',
    'docs/runbooks/payments.md': RUNBOOK,
    'src/index.ts': 'export const ignored = true;\n',
  });
  fake.files.set('acme/web', { 'docs/deploys.markdown': '# Deploys\n\nDeploys happen on Tuesdays. Roll back with the previous image tag.\n' });
}

const githubSource = async (server: TestServer, session: Session, name: string, config: Record<string, unknown>): Promise<string> => {
  const created = await server.request('POST', '/sources', { token: session.token, body: { name, connector: 'github', config } });
  expect(created.status, created.text).toBe(201);
  return created.body.id as string;
};

const blobReads = (fake: FakeGithub): number => fake.requests.filter((request) => request.path.includes('/git/blobs/')).length;

const ctx = useSuite(async (own) => {
  const fake = own(await startFakeGithub());
  seedDocs(fake);
  const wired = own(await startWiredOrg({ SERVICE_FEATURES_RAG: 'true' }), stopLlmServer);
  const source = await githubSource(wired.server, wired.owner, 'acme-github', { auth: { kind: 'pat', token: TOKEN }, orgs: ['acme'], base_url: fake.url });
  return { ...wired, fake, source };
});

const sync = (collection: string) => ctx.server.request('POST', `/rag/collections/${collection}/sync`, { token: ctx.owner.token });

/** the collection's documents by name, once none is pending or indexing */
async function settledDocuments(collection: string): Promise<Map<string, any>> {
  return eventually(
    async () => {
      const listed = await ctx.server.request('GET', `/rag/collections/${collection}/documents?limit=100`, { token: ctx.owner.token });
      expectStatus(listed, 200);
      const items = listed.body.items as { name: string; status: string }[];
      if (items.some((item) => item.status === 'pending' || item.status === 'indexing')) return undefined;
      return new Map(items.map((item) => [item.name, item]));
    },
    { what: 'the synced documents to be indexed' },
  );
}

const search = (collection: string, query: string) => ctx.server.request('POST', '/rag/search', { token: ctx.owner.token, body: { query, collection, k: 3 } });

describe('POST /rag/collections/:id/sync (github source)', { timeout: 120_000 }, () => {
  it('adds the Markdown files, then reads and re-indexes only what changed, and deletes what is gone', async () => {
    const { server, owner, fake, source } = ctx;
    const collection = await createCollection(server, owner, { name: 'acme-docs', embedding_model: 'fake-embed-256', source_id: source });
    const shown = await server.request('GET', `/rag/collections/${collection}`, { token: owner.token });
    expect(shown.body.source_id).toBe(source);

    const first = await sync(collection);
    expectStatus(first, 200);
    expect(first.body).toEqual({ source_id: source, listed: 3, added: 3, updated: 0, unchanged: 0, deleted: 0, truncated: false });
    expect(blobReads(fake)).toBe(3);
    const documents = await settledDocuments(collection);
    expect([...documents.keys()].sort()).toEqual(['acme/api/README.md', 'acme/api/docs/runbooks/payments.md', 'acme/web/docs/deploys.markdown']);
    const payments = documents.get('acme/api/docs/runbooks/payments.md');
    expect(payments).toMatchObject({
      status: 'ready',
      format: 'markdown',
      origin: 'source',
      origin_ref: `${source}:acme/api/docs/runbooks/payments.md`,
      metadata: { repository: 'acme/api', path: 'docs/runbooks/payments.md', branch: 'main', source: 'acme-github' },
    });
    expect(documents.get('acme/web/docs/deploys.markdown').metadata.branch).toBe('trunk');
    const found = await search(collection, 'database disk full');
    expect(found.body.items[0]).toMatchObject({ document: { name: 'acme/api/docs/runbooks/payments.md' } });

    // nothing changed: no blob is read, nothing is re-indexed
    const again = await sync(collection);
    expect(again.body).toMatchObject({ listed: 3, added: 0, updated: 0, unchanged: 3, deleted: 0 });
    expect(blobReads(fake)).toBe(3);
    expect((await settledDocuments(collection)).get('acme/api/docs/runbooks/payments.md').indexed_at).toBe(payments.indexed_at);

    // one file changed, one removed, one added
    const files = fake.files.get('acme/api')!;
    files['docs/runbooks/payments.md'] = RUNBOOK.replace('rotate the write-ahead log archive', 'page the database on-call and expand the volume');
    delete files['README.md'];
    files['docs/runbooks/kafka.md'] = '# Kafka\n\n## Consumer lag\n\nRestart the stuck consumer group and watch the lag drain.\n';
    const changed = await sync(collection);
    expect(changed.body).toMatchObject({ listed: 3, added: 1, updated: 1, unchanged: 1, deleted: 1 });
    expect(blobReads(fake)).toBe(5);
    const after = await settledDocuments(collection);
    expect([...after.keys()].sort()).toEqual(['acme/api/docs/runbooks/kafka.md', 'acme/api/docs/runbooks/payments.md', 'acme/web/docs/deploys.markdown']);
    expect(after.get('acme/api/docs/runbooks/payments.md').content_hash).not.toBe(payments.content_hash);
    const lag = await search(collection, 'consumer lag');
    expect(lag.body.items[0].document.name).toBe('acme/api/docs/runbooks/kafka.md');
    const expand = await search(collection, 'expand the volume');
    expect(expand.body.items[0].text).toContain('expand the volume');
    const gone = await search(collection, 'checkout and refunds');
    expect(gone.body.items.map((item: { document: { name: string } }) => item.document.name)).not.toContain('acme/api/README.md');
  });

  it('refuses a collection without a source, a source without documents, and reports what GitHub refused', async () => {
    const { server, owner, fake } = ctx;
    const plain = await createCollection(server, owner, { name: 'plain', dimension: 256, embedding_model: 'fake-embed-256' });
    const none = await sync(plain);
    expect(none.status).toBe(409);
    expect(none.body.error.details.reason).toBe('no_source');

    const missing = await server.request('POST', '/rag/collections', { token: owner.token, body: { name: 'orphan', dimension: 256, source_id: 'src_nope' } });
    expect(missing.status, missing.text).toBe(400);
    expect(missing.body.error.message).toContain('source_id');

    const badToken = await githubSource(server, owner, 'bad-token', { auth: { kind: 'pat', token: 'ghp_wrong' }, orgs: ['acme'], base_url: fake.url });
    const refusedCollection = await createCollection(server, owner, {
      name: 'refused',
      dimension: 256,
      embedding_model: 'fake-embed-256',
      source_id: badToken,
    });
    const refused = await sync(refusedCollection);
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'rag_sync_failed', details: { reason: 'unauthorized', source_id: badToken } });
  });
});

describe('the egress guard on a source sync', { timeout: 60_000 }, () => {
  const world = useSuite(async (own) => {
    const fake = own(await startFakeGithub());
    seedDocs(fake);
    // nothing opened: GitHub's loopback address is refused at call time
    return { fake, ...own(await oneOrg({ SERVICE_FEATURES_RAG: 'true', EGRESS_ALLOW: '' }), (it) => it.server.stop()) };
  });

  it('refuses to call GitHub on a loopback address: 422 egress_refused, nothing requested', async () => {
    const { server, owner, fake } = world;
    const base = fake.url.replace('127.0.0.1', 'localhost');
    const source = await githubSource(server, owner, 'guarded', { auth: { kind: 'pat', token: TOKEN }, orgs: ['acme'], base_url: base });
    const collection = await createCollection(server, owner, { name: 'guarded', dimension: 256, embedding_model: 'fake-embed-256', source_id: source });
    const answer = await server.request('POST', `/rag/collections/${collection}/sync`, { token: owner.token });
    expect(answer.status, answer.text).toBe(422);
    expect(answer.body.error.code).toBe('egress_refused');
    expect(fake.requests).toEqual([]);
  });
});
