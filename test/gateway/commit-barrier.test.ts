/**
 * The HTTP edge answers only once the metadata store has committed: the uWS
 * adapter holds each response until the store's `committed()` settles, and
 * turns a failed commit into a 503 instead of acknowledging a lost write.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyGuard } from '../../gateway/idempotency.js';
import { Pipeline } from '../../gateway/pipeline.js';
import { route } from '../../gateway/route.js';
import { listen, type ListeningServer } from '../../gateway/uws-server.js';
import { openCollections } from '../../domains/collections.js';
import { createLogger } from '../../runtime/logger.js';
import { SqliteMetadataStore } from '../../runtime/store/sqlite.js';
import { eventually, pause } from '../helpers/eventually.js';

describe('edge: responses wait for the commit', () => {
  const store = new SqliteMetadataStore(join(mkdtempSync(join(tmpdir(), 'barrier-')), 'metadata.db'));
  const events: string[] = [];
  /** the barrier the adapter sees: the test decides when (and whether) the commit settles */
  let gate: Promise<void> | null = null;
  let server: ListeningServer;
  let url: string;

  beforeAll(async () => {
    const collections = await openCollections(store);
    const pipeline = new Pipeline({
      routes: [
        route({
          method: 'POST',
          path: '/probe',
          tag: 'meta',
          auth: 'public',
          summary: 'records that it ran',
          handler: async () => {
            events.push('handled');
            return { status: 202, json: { ok: true } };
          },
        }),
      ],
      authenticator: { authenticate: () => Promise.reject(new Error('no bearer routes here')) },
      idempotency: new IdempotencyGuard(collections.idempotency, Buffer.alloc(32, 1)),
      cursorKey: Buffer.alloc(32, 2),
      features: { rag: false, workers: false, orchestrator: false, voice: false, policies: false },
      logger: createLogger({ logLevel: 'silent' }),
    });
    server = await listen(pipeline, '127.0.0.1', 0, () => gate);
    url = `http://127.0.0.1:${server.port}/api/v1/probe`;
  });
  afterAll(async () => {
    await server.close(1000);
    await store.close();
  });

  it('holds the response until the commit settles', async () => {
    events.length = 0;
    let release!: () => void;
    gate = new Promise<void>((resolve) => (release = resolve));
    const answered = fetch(url, { method: 'POST' }).then(async (response) => {
      events.push('responded');
      return response.status;
    });
    await eventually(() => events.includes('handled') || undefined, { what: 'the handler', interval: 5 });
    // long enough for an unheld answer to arrive over loopback first
    await pause(100);
    events.push('committed');
    gate = null;
    release();
    expect(await answered).toBe(202);
    expect(events).toEqual(['handled', 'committed', 'responded']);
  });

  it('answers 503 instead of acknowledging a write whose commit failed', async () => {
    gate = Promise.reject(new Error('disk full'));
    gate.catch(() => undefined);
    const response = await fetch(url, { method: 'POST' });
    gate = null;
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');
  });

  it('answers at once when nothing is uncommitted', async () => {
    gate = null;
    expect((await fetch(url, { method: 'POST' })).status).toBe(202);
  });
});
