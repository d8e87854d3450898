/**
 * PUT /files/content streams: the server writes the body to disk as it
 * arrives, enforces the limit on chunked bodies, and keeps nothing of an
 * upload that is refused or cut off. Chunked requests over node:http, so the
 * test controls when each part of the body is sent.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { Agent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARTIAL_SUFFIX } from '../../runtime/files/paths.js';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';

let server: TestServer;
let owner: Session;
const LIMIT = 16 * 1024 * 1024;

beforeAll(async () => ({ server, owner } = await oneOrg({ FILES_MAX_UPLOAD_BYTES: String(LIMIT) }, { name: 'Streaming Org' })));
afterAll(async () => server.stop());

/** a chunked PUT (no content-length): the caller writes the body, and reads the answer from `response` */
function chunkedPut(path: string, agent?: Agent): { request: ClientRequest; response: Promise<{ status: number; body: Record<string, any> }> } {
  const url = new URL(`${server.url}/files/content?path=${encodeURIComponent(path)}`);
  const request = httpRequest(url, {
    ...(agent ? { agent } : {}),
    method: 'PUT',
    headers: { authorization: `Bearer ${owner.token}`, 'transfer-encoding': 'chunked' },
  });
  const response = new Promise<{ status: number; body: Record<string, any> }>((resolve, reject) => {
    request.on('response', (message: IncomingMessage) => {
      let text = '';
      message.on('data', (chunk: Buffer) => (text += chunk.toString()));
      message.on('end', () => resolve({ status: message.statusCode ?? 0, body: JSON.parse(text) as Record<string, any> }));
    });
    request.on('error', reject);
  });
  return { request, response };
}

const orgDir = (): string => join(server.dataDir, 'files', owner.organization.id);
/** the temporary files of uploads in progress in one folder of the organization */
const partials = (folder = ''): string[] => {
  const dir = join(orgDir(), folder);
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(PARTIAL_SUFFIX)) : [];
};

/** waits (polling the disk) until `done` holds; fails after 10 s */
const until = (done: () => boolean, what: string): Promise<true> => eventually(() => done() || undefined, { what });

describe('streamed uploads', () => {
  it('writes the file while the body is still arriving, and stores it whole', async () => {
    const parts = Array.from({ length: 8 }, (_, at) => Buffer.alloc(1024 * 1024, at + 1));
    const { request, response } = chunkedPut('stream/big.bin');
    request.write(parts[0]);
    // a server that buffered the body would not open the file before the last byte
    await until(() => partials('stream').length === 1, 'the partial file');
    for (const part of parts.slice(1)) request.write(part);
    request.end();
    const answer = await response;
    expect(answer.status).toBe(201);
    const sha256 = createHash('sha256');
    for (const part of parts) sha256.update(part);
    expect(answer.body).toMatchObject({ path: 'stream/big.bin', size: 8 * 1024 * 1024, sha256: sha256.digest('hex') });
    expect(readdirSync(join(orgDir(), 'stream'))).toEqual(['big.bin']);
  });

  it('refuses a chunked body once it passes the limit (413) and keeps nothing', async () => {
    const { request, response } = chunkedPut('too-big.bin');
    request.on('error', () => undefined);
    for (let sent = 0; sent <= LIMIT; sent += 1024 * 1024) request.write(Buffer.alloc(1024 * 1024, 7));
    request.end();
    const answer = await response;
    expect(answer.status).toBe(413);
    expect(answer.body['error']).toMatchObject({ code: 'payload_too_large', details: { limit_bytes: LIMIT } });
    await until(() => partials().length === 0, 'the partial file to go');
    expect((await server.request('GET', '/files/info?path=too-big.bin', { token: owner.token })).status).toBe(404);
  });

  it('reads the next upload on a keep-alive connection after a body that ended while reading was paused', async () => {
    // a handler behind the socket pauses it; the body's end can then arrive from uWS's buffer while
    // paused, and a socket left paused would stall the connection's next request until its idle timeout
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 8; i++) {
        const { request, response } = chunkedPut(`keep-alive/${i}.bin`, agent);
        for (let part = 0; part < 6; part++) request.write(Buffer.alloc(1024 * 1024, i));
        request.end();
        expect(await response).toMatchObject({ status: 201, body: { size: 6 * 1024 * 1024 } });
      }
    } finally {
      agent.destroy();
    }
  });

  it('keeps nothing of an upload whose client goes away mid-body', async () => {
    const { request, response } = chunkedPut('cut-off.bin');
    response.catch(() => undefined);
    request.on('error', () => undefined);
    request.write(Buffer.alloc(256 * 1024, 3));
    await until(() => partials().length === 1, 'the partial file');
    request.destroy();
    await until(() => partials().length === 0, 'the partial file to go');
    expect((await server.request('GET', '/files/info?path=cut-off.bin', { token: owner.token })).status).toBe(404);
    // the server goes on serving
    expect((await server.request('PUT', '/files/content?path=after.txt', { token: owner.token, body: 'ok' })).status).toBe(201);
  });
});
