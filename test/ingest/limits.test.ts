import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ownOrgs, useSuite } from '../helpers/suite.js';
import { oneOrg } from '../helpers/orgs.js';
import { createPipeline, ingest, ndjson } from './helpers.js';
import { expectError } from '../helpers/expect-status.js';

const LIMIT = 1000;

/** POSTs `chunks` with Transfer-Encoding: chunked (no Content-Length), so the limit can only be seen while reading. */
function postChunked(url: string, chunks: readonly Buffer[]): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked' } }, (res) => {
      answered = true;
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    // the server answers and closes before reading the rest: a write error after the answer is expected
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe('ingest body limit (CONTEXT_INGEST_MAX_BYTES)', () => {
  const ctx = useSuite(async (own) => {
    const { server, owner: alice } = ownOrgs(own, await oneOrg({ CONTEXT_INGEST_MAX_BYTES: String(LIMIT) }));
    const pipeline = await createPipeline(server, alice);
    return { server, alice, pipeline };
  });

  const rowsOfSize = (bytes: number): string => {
    const rows: string[] = [];
    let size = 0;
    while (size < bytes) {
      const line = JSON.stringify({ label: 'row', n: rows.length, pad: 'x'.repeat(40) }) + '\n';
      rows.push(line);
      size += Buffer.byteLength(line);
    }
    return rows.join('');
  };

  async function eventCount(): Promise<number> {
    const tables = await ctx.server.request('GET', '/context/tables', { token: ctx.alice.token });
    const found = (tables.body.items as { name: string; row_count: number }[]).find((item) => item.name === 'context_events');
    return found ? found.row_count : 0;
  }

  it('accepts a body under the limit', async () => {
    const body = ndjson([{ label: 'small' }]);
    const response = await ingest(ctx.server, ctx.pipeline.token, body);
    expect(response.status).toBe(200);
    expect(await eventCount()).toBe(1);
  });

  it('answers 413 payload_too_large from Content-Length, writing nothing', async () => {
    const body = rowsOfSize(LIMIT + 500);
    const response = await ingest(ctx.server, ctx.pipeline.token, body);
    expect(response.status).toBe(413);
    expect(response.body.error).toMatchObject({ code: 'payload_too_large', details: { limit_bytes: LIMIT } });
    expect(await eventCount()).toBe(1);
  });

  it('answers 413 payload_too_large for a chunked body that crosses the limit while being read', async () => {
    const chunks = Array.from({ length: 8 }, () => Buffer.from(rowsOfSize(300)));
    const response = await postChunked(`${ctx.server.url}/context/ingest/webhook/${ctx.pipeline.token}`, chunks);
    expectError(response, 413, 'payload_too_large');
    expect(await eventCount()).toBe(1);
  });
});
