/** /files against the real server: upload, list (glob, sort), info, download, delete, safety, isolation. */
import { createHash } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from '../helpers/members.js';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

let server: TestServer;
let owner: Session;

const put = (path: string, content: string | Buffer, token = owner.token) =>
  server.request('PUT', `/files/content?path=${encodeURIComponent(path)}`, { token, body: Buffer.from(content) });

beforeAll(async () => ({ server, owner } = await oneOrg({ FILES_MAX_UPLOAD_BYTES: '4096' }, { name: 'Files Org' })));
afterAll(async () => server.stop());

describe('/files', () => {
  it('uploads, answers info with the sha256, downloads the same bytes, lists and deletes', async () => {
    const content = 'id,name\n1,alpha\n';
    const uploaded = await put('/reports//2026/./q1.csv', content);
    expect(uploaded.status).toBe(201);
    const sha256 = createHash('sha256').update(content).digest('hex');
    expect(uploaded.body).toMatchObject({ path: 'reports/2026/q1.csv', size: content.length, content_type: 'text/csv', sha256 });

    const info = await server.request('GET', '/files/info?path=reports/2026/q1.csv', { token: owner.token });
    expectStatus(info, 200).toMatchObject({ path: 'reports/2026/q1.csv', size: content.length, content_type: 'text/csv', sha256 });
    expect(Date.parse(info.body.modified_at)).toBeGreaterThan(0);

    const download = await fetch(`${server.url}/files/content?path=reports/2026/q1.csv`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('text/csv');
    expect(download.headers.get('x-file-size')).toBe(String(content.length));
    expect(await download.text()).toBe(content);

    const deleted = await server.request('DELETE', '/files/content?path=reports/2026/q1.csv', { token: owner.token });
    expect(deleted.body).toEqual({ path: 'reports/2026/q1.csv', deleted: true });
    expect((await server.request('GET', '/files/info?path=reports/2026/q1.csv', { token: owner.token })).status).toBe(404);
  });

  it('lists with a glob filter and sorts by name, size and modified time, descending on request', async () => {
    const session = await server.register('Sort Org');
    await put('b.txt', 'bb', session.token);
    await put('a.csv', 'aaaa', session.token);
    await put('dir/c.csv', 'c', session.token);
    const list = (query: string) => server.request('GET', `/files${query}`, { token: session.token });

    const byName = await list('');
    expect(byName.body.items.map((file: { path: string }) => file.path)).toEqual(['a.csv', 'b.txt', 'dir/c.csv']);
    expect(byName.body.total).toBe(3);
    expect((await list('?sort=size')).body.items.map((file: { path: string }) => file.path)).toEqual(['dir/c.csv', 'b.txt', 'a.csv']);
    expect((await list('?sort=size&desc=true')).body.items.map((file: { path: string }) => file.path)).toEqual(['a.csv', 'b.txt', 'dir/c.csv']);
    // a pattern without "/" matches file names at any depth
    expect((await list('?filter=*.csv')).body.items.map((file: { path: string }) => file.path)).toEqual(['a.csv', 'dir/c.csv']);
    expect((await list('?filter=dir/**')).body.items.map((file: { path: string }) => file.path)).toEqual(['dir/c.csv']);
    expect((await list('?prefix=dir')).body.items.map((file: { path: string }) => file.path)).toEqual(['dir/c.csv']);

    const page = await list('?limit=2');
    expect(page.body.items).toHaveLength(2);
    const rest = await list(`?limit=2&cursor=${page.body.next_cursor as string}`);
    expect(rest.body.items.map((file: { path: string }) => file.path)).toEqual(['dir/c.csv']);
    expect(rest.body.next_cursor).toBeNull();

    // modified order follows upload order once the clock has moved on
    await put('b.txt', 'bbb', session.token);
    const byModified = (await list('?sort=modified&desc=true')).body.items.map((file: { path: string }) => file.path);
    expect(byModified[0]).toBe('b.txt');
  });

  it('answers 400 for a bad glob, a bad sort, and paths that climb out or name nothing', async () => {
    const badGlob = await server.request('GET', '/files?filter=%5Bunclosed', { token: owner.token });
    expect(badGlob.status).toBe(400);
    expect(badGlob.body.error).toMatchObject({ code: 'validation_error', details: { field: 'filter' } });
    expect((await server.request('GET', '/files?sort=color', { token: owner.token })).status).toBe(400);
    for (const path of ['../escape.txt', 'a/../../b', '/', 'a\\b']) {
      const response = await put(path, 'x');
      expectError(response, 400, 'validation_error');
    }
    expect((await server.request('GET', '/files/info', { token: owner.token })).status).toBe(400);
  });

  it('refuses a body over FILES_MAX_UPLOAD_BYTES with 413 and keeps nothing', async () => {
    const response = await put('big.bin', Buffer.alloc(5000, 1));
    expectError(response, 413, 'payload_too_large');
    expect((await server.request('GET', '/files/info?path=big.bin', { token: owner.token })).status).toBe(404);
  });

  it('answers 409 when a file or a directory is in the way', async () => {
    await put('clash/inner.txt', 'x');
    expect((await put('clash', 'y')).status).toBe(409);
    await put('plain.txt', 'x');
    expect((await put('plain.txt/child.txt', 'y')).status).toBe(409);
  });

  it('never follows a symlink out of the organization folder', async () => {
    const session = await server.register('Symlink Org');
    await put('seed.txt', 'x', session.token);
    const outside = join(server.dataDir, 'outside');
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    const orgDir = join(server.dataDir, 'files', session.organization.id);
    symlinkSync(outside, join(orgDir, 'linked-dir'));
    symlinkSync(join(outside, 'secret.txt'), join(orgDir, 'linked-file.txt'));

    expect((await server.request('GET', '/files/info?path=linked-file.txt', { token: session.token })).status).toBe(404);
    expect((await server.request('GET', '/files/content?path=linked-dir/secret.txt', { token: session.token })).status).toBe(404);
    expect((await put('linked-dir/planted.txt', 'x', session.token)).status).toBe(404);
    const listed = await server.request('GET', '/files', { token: session.token });
    expect(listed.body.items.map((file: { path: string }) => file.path)).toEqual(['seed.txt']);
  });

  it('keeps organizations apart: another organization gets 404 and an empty list', async () => {
    await put('private.txt', 'mine');
    const other = await server.register('Other Org');
    expect((await server.request('GET', '/files/info?path=private.txt', { token: other.token })).status).toBe(404);
    expect((await server.request('GET', '/files/content?path=private.txt', { token: other.token })).status).toBe(404);
    expect((await server.request('DELETE', '/files/content?path=private.txt', { token: other.token })).status).toBe(404);
    expect((await server.request('GET', '/files', { token: other.token })).body.total).toBe(0);
  });

  it('needs file:write to upload (a viewer gets 403) and a token at all (401)', async () => {
    const viewer = await addMember(server, owner, 'viewer');
    const refused = await put('viewer.txt', 'x', viewer.token);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'file:write' } });
    expect((await server.request('GET', '/files', { token: viewer.token })).status).toBe(200);
    expect((await server.request('GET', '/files')).status).toBe(401);
  });
});
