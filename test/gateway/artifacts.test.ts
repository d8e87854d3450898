/** /artifacts: the files runs wrote with `files.write_artifact`, listed, filtered, downloaded and deleted across runs. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlmServer } from '../fakes/llm/server.js';
import { startLlmServer, stopLlmServer } from '../helpers/llm.js';
import type { Session, TestServer } from '../helpers/server.js';
import { execute, names, send, wireOrganization } from '../runtime/chat-helpers.js';
import { createTask, runReaches } from '../tasks/helpers.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const REPORT = '# Weekly report\n\nAll green; ünïcode survives.\n';
// a 1x1 transparent PNG
const PIXEL_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const PIXEL = Buffer.from(PIXEL_BASE64, 'base64');

describe('/artifacts', () => {
  let server: TestServer;
  let llm: FakeLlmServer;
  let owner: Session;
  let task: any;
  let taskRun: any;
  let chatRunId: string;

  /** Fires a task (writes allowed) whose model makes `calls` in one turn; resolves with the finished run. */
  async function runTask(session: Session, name: string, calls: ReturnType<typeof execute>[]): Promise<{ task: any; run: any }> {
    const created = await createTask(server, session, {
      name,
      trigger: { kind: 'webhook' },
      input: { instruction: 'write' },
      approval_defaults: { write: 'allow' },
    });
    llm.script([{ tool_calls: calls }, { text: 'done' }]);
    const fire = await server.request('POST', `/tasks/${created.id}/run`, { token: session.token });
    expect(fire.status).toBe(202);
    return { task: created, run: await runReaches(server, session, created.id, fire.body.run_id, 'succeeded') };
  }

  const list = (query: string, session = owner) => server.request('GET', `/artifacts${query}`, { token: session.token });

  beforeAll(async () => {
    ({ server, llm } = await startLlmServer());
    const chat = await wireOrganization(server, llm, { approvalWrite: 'allow' });
    owner = chat.session;
    ({ task, run: taskRun } = await runTask(owner, 'weekly', [
      execute('files.write_artifact', { path: 'report.md', content: REPORT }),
      execute('files.write_artifact', { path: 'charts/pixel.png', content: PIXEL_BASE64, encoding: 'base64' }),
    ]));
    // a chat reply writes one too
    llm.script([{ tool_calls: [execute('files.write_artifact', { path: 'answer.csv', content: 'a,b\n1,2\n' })] }, { text: 'saved' }]);
    const stream = await send(server, chat, 'export it');
    await stream.ended;
    expect(names(stream.events).at(-1)).toBe('message_end');
    chatRunId = stream.headers.get('x-run-id') as string;
  });
  afterAll(async () => stopLlmServer({ server, llm }));

  it('lists every artifact with its run and task, oldest run first', async () => {
    const all = await list('');
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(3);
    expect(all.body.next_cursor).toBeNull();
    expect(all.body.items.map((item: any) => [item.run_id, item.name, item.task_id, item.content_type, item.size])).toEqual([
      [taskRun.id, 'charts/pixel.png', task.id, 'image/png', PIXEL.length],
      [taskRun.id, 'report.md', task.id, 'text/markdown', Buffer.byteLength(REPORT)],
      [chatRunId, 'answer.csv', null, 'text/csv', 8],
    ]);
    const report = all.body.items[1];
    expect(report.path).toBe(`artifacts/${taskRun.id}/report.md`);
    expect(report.conversation_id).toBeNull();
    expect(all.body.items[2].conversation_id).toMatch(/^cnv_/);
    expect(Number.isNaN(Date.parse(report.created_at))).toBe(false);
    expect(report.id).toMatch(/^art_[A-Za-z0-9_-]+$/);
  });

  it('filters by run, task, content type prefix and creation time', async () => {
    const byRun = await list(`?run_id=${chatRunId}`);
    expect(byRun.body.items.map((item: any) => item.name)).toEqual(['answer.csv']);
    const byTask = await list(`?task_id=${task.id}`);
    expect(byTask.body.items.map((item: any) => item.name)).toEqual(['charts/pixel.png', 'report.md']);
    expect((await list(`?task_id=${task.id}&run_id=${chatRunId}`)).body.total).toBe(0);
    expect((await list('?task_id=tsk_nope')).body.total).toBe(0);
    expect((await list('?run_id=..%2F..')).body.total).toBe(0);
    expect((await list('?content_type=image/')).body.items.map((item: any) => item.name)).toEqual(['charts/pixel.png']);
    expect((await list('?content_type=text/')).body.total).toBe(2);
    expect((await list('?created_after=2000-01-01T00:00:00Z')).body.total).toBe(3);
    expect((await list('?created_after=2999-01-01T00:00:00Z')).body.total).toBe(0);
    const bad = await list('?created_after=yesterday');
    expectError(bad, 400, 'validation_error');
  });

  it('pages with the shared cursor and limit', async () => {
    const first = await list('?limit=2');
    expect(first.body.items).toHaveLength(2);
    expect(first.body.total).toBe(3);
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await list(`?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.items.map((item: any) => item.name)).toEqual(['answer.csv']);
    expect(second.body.next_cursor).toBeNull();
    const forged = await list('?cursor=not-a-cursor');
    expectError(forged, 400, 'invalid_cursor');
    expect((await list('?limit=0')).status).toBe(400);
  });

  it('shows one artifact with its SHA-256 and downloads it byte-exact as an attachment', async () => {
    const items = (await list(`?run_id=${taskRun.id}`)).body.items;
    const png = items.find((item: any) => item.name === 'charts/pixel.png');
    const one = await server.request('GET', `/artifacts/${png.id}`, { token: owner.token });
    expectStatus(one, 200).toEqual({ ...png, sha256: (await import('node:crypto')).createHash('sha256').update(PIXEL).digest('hex') });

    const download = await fetch(`${server.url}/artifacts/${png.id}/content`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('image/png');
    expect(download.headers.get('content-length')).toBe(String(PIXEL.length));
    expect(download.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''pixel.png");
    expect(Buffer.from(await download.arrayBuffer()).equals(PIXEL)).toBe(true);

    const report = items.find((item: any) => item.name === 'report.md');
    const text = await fetch(`${server.url}/artifacts/${report.id}/content`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(text.headers.get('content-length')).toBe(String(Buffer.byteLength(REPORT)));
    expect(await text.text()).toBe(REPORT);
  });

  it('another organization sees none, and gets 404 on get, download and delete', async () => {
    const stranger = await server.register('Stranger Inc');
    const listing = await list('', stranger);
    expectStatus(listing, 200).toEqual({ items: [], next_cursor: null, total: 0 });
    expect((await list(`?run_id=${taskRun.id}`, stranger)).body.total).toBe(0);
    const id = (await list('')).body.items[0].id;
    for (const [method, path] of [
      ['GET', `/artifacts/${id}`],
      ['GET', `/artifacts/${id}/content`],
      ['DELETE', `/artifacts/${id}`],
    ] as const) {
      const answer = await server.request(method, path, { token: stranger.token });
      expectError(answer, 404, 'not_found');
    }
    expect((await list('')).body.total).toBe(3);
  });

  it('an id that is not one we issue, or that climbs out of the run folder, is 404', async () => {
    const encode = (text: string) => `art_${Buffer.from(text).toString('base64url')}`;
    for (const id of [
      '..%2F..',
      '..%2F..%2Fetc%2Fpasswd',
      'art_%2E%2E',
      'art_!!!',
      encode(`${taskRun.id}/../../jwt-secret`),
      encode(`${taskRun.id}/../${chatRunId}/answer.csv`),
      encode(`../${taskRun.id}/report.md`),
      encode(`${taskRun.id}//report.md`),
      encode(`${taskRun.id}/missing.md`),
      encode('report.md'),
    ]) {
      const answer = await server.request('GET', `/artifacts/${id}`, { token: owner.token });
      expect([400, 404]).toContain(answer.status);
      expect(answer.body.error.code).toMatch(/^(not_found|validation_error)$/);
      expect((await server.request('GET', `/artifacts/${id}/content`, { token: owner.token })).status).toBeGreaterThanOrEqual(400);
    }
    // the well-formed spelling works
    expect((await server.request('GET', `/artifacts/${encode(`${taskRun.id}/report.md`)}`, { token: owner.token })).status).toBe(200);
  });

  it('reading needs file:read and deleting file:write; a deleted artifact is gone from the list and the run', async () => {
    const viewerKey = await server.request('POST', '/api-keys', { token: owner.token, body: { name: 'ro', permissions: ['task:read'] } });
    expect(viewerKey.status).toBe(201);
    const denied = await server.request('GET', '/artifacts', { token: viewerKey.body.key });
    expect(denied.status).toBe(403);
    const reader = await server.request('POST', '/api-keys', { token: owner.token, body: { name: 'files', permissions: ['file:read'] } });
    const answer = (await list('')).body.items.find((item: any) => item.name === 'answer.csv');
    expect((await server.request('GET', `/artifacts/${answer.id}`, { token: reader.body.key })).status).toBe(200);
    expect((await server.request('DELETE', `/artifacts/${answer.id}`, { token: reader.body.key })).status).toBe(403);

    const removed = await server.request('DELETE', `/artifacts/${answer.id}`, { token: owner.token });
    expectStatus(removed, 200).toEqual({ id: answer.id, deleted: true });
    expect((await server.request('GET', `/artifacts/${answer.id}`, { token: owner.token })).status).toBe(404);
    expect((await server.request('DELETE', `/artifacts/${answer.id}`, { token: owner.token })).status).toBe(404);
    expect((await list('')).body.total).toBe(2);
  });

  it('documents the routes in /openapi.json', async () => {
    const document = await server.request('GET', '/openapi.json');
    const paths = document.body.paths;
    expect(Object.keys(paths['/api/v1/artifacts/{id}']).sort()).toEqual(['delete', 'get']);
    expect(paths['/api/v1/artifacts/{id}/content'].get).toBeDefined();
    const item = paths['/api/v1/artifacts'].get.responses['200'].content['application/json'].schema.properties.items.items;
    expect(Object.keys(item.properties).sort()).toEqual(['content_type', 'conversation_id', 'created_at', 'id', 'name', 'path', 'run_id', 'size', 'task_id']);
  });
});
