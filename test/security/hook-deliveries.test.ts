/**
 * A delivery that fails verification keeps only its headers (signatures
 * redacted), size and SHA-256: its body is neither answered nor in the
 * SQLite files. A verified delivery keeps its body and can be replayed.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signHmac } from '../../runtime/crypto.js';
import type { FakeLlmServer } from '../fakes/llm/server.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import type { Session, TestServer } from '../helpers/server.js';
import {} from '../runtime/chat-helpers.js';
import { createTask } from '../tasks/helpers.js';
import { hookPathOf } from './helpers.js';
import { expectError } from '../helpers/expect-status.js';

describe('stored inbound deliveries', () => {
  let server: TestServer, llm: FakeLlmServer, owner: Session;
  beforeAll(async () => ({ server, llm, owner } = await startWiredOrg()));
  afterAll(async () => stopLlmServer({ server, llm }));

  /** the SQLite file and its WAL, as bytes on disk */
  const databaseBytes = (): Buffer =>
    Buffer.concat(
      ['metadata.db', 'metadata.db-wal']
        .map((name) => join(server.dataDir, name))
        .filter(existsSync)
        .map((file) => readFileSync(file)),
    );

  const deliveryOf = async (taskId: string) => {
    const list = await server.request('GET', `/tasks/${taskId}/deliveries`, { token: owner.token });
    expect(list.status).toBe(200);
    const [first] = list.body.items as { id: string }[];
    const one = await server.request('GET', `/hooks/deliveries/${first?.id}`, { token: owner.token });
    expect(one.status).toBe(200);
    return { list: list.body.items as Record<string, any>[], one: one.body as Record<string, any> };
  };

  const cases: readonly { name: string; headers: (body: string) => Record<string, string>; verification: string; task?: Record<string, unknown> }[] = [
    { name: 'unsigned', headers: () => ({}), verification: 'missing' },
    { name: 'mis-signed', headers: (body) => ({ 'x-service-signature': signHmac('whsec_wrong_secret', Buffer.from(body)) }), verification: 'invalid' },
    { name: 'malformed signature', headers: () => ({ 'x-service-signature': 'sha1=0123' }), verification: 'invalid' },
    {
      name: 'stale timestamp',
      headers: (body) => ({ 'x-service-timestamp': '1000', 'x-service-signature': signHmac('whsec_wrong_secret', Buffer.from(`1000.${body}`)) }),
      verification: 'stale_timestamp',
      task: { trigger: { kind: 'webhook', require_timestamp: true } },
    },
  ];

  for (const { name, headers, verification, task: extra } of cases) {
    it(`${name}: 401, stored without its body (size and SHA-256 only, signature redacted), not in the db file`, async () => {
      const task = await createTask(server, owner, { name: `rejected ${name}`, trigger: { kind: 'webhook' }, input_template: { instruction: 'x' }, ...extra });
      const marker = `unsigned-body-marker-${Math.random().toString(36).slice(2)}`;
      const body = JSON.stringify({ marker, padding: 'p'.repeat(4000) });
      const sent = headers(body);
      const hit = await server.request('POST', hookPathOf(task.trigger.url as string), {
        body,
        headers: { 'content-type': 'application/json', 'x-github-event': 'push', ...sent },
      });
      expectError(hit, 401, 'bad_signature');

      const { list, one } = await deliveryOf(task.id as string);
      expect(list).toHaveLength(1);
      expect(one).toMatchObject({
        status: 'rejected',
        verification,
        body_base64: '',
        size_bytes: Buffer.byteLength(body),
        body_sha256: createHash('sha256').update(body).digest('hex'),
        run_id: null,
      });
      expect(one['headers']['x-github-event']).toBe('push');
      expect(one['headers']['content-type']).toBe('application/json');
      if (sent['x-service-signature'] !== undefined) expect(one['headers']['x-service-signature']).toBe('[redacted]');
      expect(JSON.stringify(list)).not.toContain(marker);

      const bytes = databaseBytes();
      expect(bytes.includes(marker)).toBe(false);
      expect(bytes.includes(Buffer.from(body).toString('base64').slice(0, 200))).toBe(false);
      if (sent['x-service-signature'] !== undefined) expect(bytes.includes(sent['x-service-signature'])).toBe(false);

      const replay = await server.request('POST', `/hooks/deliveries/${one['id']}/replay`, { token: owner.token });
      expectError(replay, 409, 'conflict');
    });
  }

  it('a valid delivery keeps its body (API and db file) and replays into a new run', async () => {
    const task = await createTask(server, owner, {
      name: 'accepted',
      trigger: { kind: 'webhook' },
      input_template: { instruction: 'x {{trigger.body.marker}}' },
    });
    const marker = `signed-body-marker-${Math.random().toString(36).slice(2)}`;
    const body = JSON.stringify({ marker });
    llm.script([{ text: 'first' }]);
    const hit = await server.request('POST', hookPathOf(task.trigger.url as string), {
      body,
      headers: { 'content-type': 'application/json', 'x-service-signature': signHmac(task.trigger.secret as string, Buffer.from(body)) },
    });
    expect(hit.status).toBe(202);
    const { one } = await deliveryOf(task.id as string);
    expect(one).toMatchObject({ status: 'accepted', verification: 'valid', body_sha256: null, size_bytes: body.length });
    expect(Buffer.from(one['body_base64'] as string, 'base64').toString()).toBe(body);
    expect(databaseBytes().includes(Buffer.from(body).toString('base64'))).toBe(true);
    llm.script([{ text: 'again' }]);
    const replay = await server.request('POST', `/hooks/deliveries/${one['id']}/replay`, { token: owner.token });
    expect(replay.status).toBe(202);
    expect(replay.body.run_id).toMatch(/^run_/);
    expect(replay.body.run_id).not.toBe(hit.body.run_id);
  });

  it('another organization reads none of them (404)', async () => {
    const other = await server.register();
    const task = await createTask(server, owner, { name: 'isolated', trigger: { kind: 'webhook' }, input_template: { instruction: 'x' } });
    await server.request('POST', hookPathOf(task.trigger.url as string), { body: '{}', headers: { 'content-type': 'application/json' } });
    const { one } = await deliveryOf(task.id as string);
    const read = await server.request('GET', `/hooks/deliveries/${one['id']}`, { token: other.token });
    expect(read.status).toBe(404);
  });
});
