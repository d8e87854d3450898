/**
 * The `memory` tools and auto-embed against the real server and the fake
 * LLM: once memory entries have vectors, the `memory.recall` tool answers
 * exactly what hybrid `POST /memory/recall` answers (same entries, same fused
 * scores: one code path), and an entry the `memory.store` tool saves is
 * auto-embedded like one made through `POST /memory`.
 */
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { expectStatus } from '../helpers/expect-status.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import { useSuite } from '../helpers/suite.js';
import { execute, send } from '../runtime/chat-helpers.js';

const ctx = useSuite(async (own) => {
  const wired = own(await startWiredOrg({ SERVICE_FEATURES_RAG: 'true' }, { approvalWrite: 'allow' }), stopLlmServer);
  const settings = await wired.server.request('PATCH', '/settings', {
    token: wired.owner.token,
    body: { auto_embed_on_ingest: true, embedding_model: 'fake-embed-256' },
  });
  expectStatus(settings, 200);
  return wired;
});

const embeddedNames = async (): Promise<string[] | undefined> => {
  const listed = await ctx.server.request('GET', '/rag/collections?limit=100', { token: ctx.owner.token });
  const collection = (listed.body.items as { id: string; name: string }[]).find((item) => item.name === '_auto.memory.default');
  if (collection === undefined) return undefined;
  const documents = await ctx.server.request('GET', `/rag/collections/${collection.id}/documents?status=ready&limit=100`, { token: ctx.owner.token });
  return (documents.body.items as { name: string }[]).map((document) => document.name).sort();
};

/** runs one chat turn whose model calls `tool` with `args`, and returns the tool's result */
async function callTool(tool: string, args: Record<string, unknown>): Promise<any> {
  ctx.llm.script([{ tool_calls: [{ id: `call_${tool}`, ...execute(tool, args) }] }, { text: 'done' }]);
  const stream = await send(ctx.server, ctx.org, `use ${tool}`);
  await stream.ended;
  const result = stream.events.find((event) => event.event === 'tool_result');
  expect(result, JSON.stringify(stream.events.map((event) => event.event))).toBeDefined();
  return result?.data.result.result;
}

describe('memory tools with auto-embed on', { timeout: 120_000 }, () => {
  it('memory.recall ranks as hybrid /memory/recall does, scores included', async () => {
    const entries: string[] = [];
    for (const [text, importance] of [
      ['Rotate the write-ahead log archive when the database disk is full.', 0.9],
      ['Certificates are renewed by cert-manager; delete a failed CertificateRequest.', 0.5],
      ['The database replica lags when the disk of the primary is slow.', 0.3],
    ] as const) {
      const created = await ctx.server.request('POST', '/memory', { token: ctx.owner.token, body: { text, importance } });
      expectStatus(created, 201);
      entries.push(created.body.id as string);
    }
    await eventually(async () => ((await embeddedNames())?.length === 3 ? true : undefined), { what: 'three memory entries embedded' });

    const route = await ctx.server.request('POST', '/memory/recall', { token: ctx.owner.token, body: { query: 'database disk full', limit: 5 } });
    expectStatus(route, 200);
    const byRoute = (route.body.items as { memory: { id: string }; score: number }[]).map((item) => ({ id: item.memory.id, score: item.score }));
    // hybrid: first in both rankings, 1/(60 + 1) twice, x (0.5 + importance 0.9); the cert entry is found by vector only
    expect(byRoute[0]).toEqual({ id: entries[0], score: expect.closeTo((2 / 61) * 1.4, 4) });
    expect(byRoute.map((item) => item.id)).toContain(entries[1]);

    const tool = await callTool('memory.recall', { query: 'database disk full', limit: 5 });
    expect((tool.items as { id: string; score: number }[]).map((item) => ({ id: item.id, score: item.score }))).toEqual(byRoute);
  });

  it('an entry memory.store saves is auto-embedded and recalled by vector', async () => {
    const before = (await embeddedNames()) ?? [];
    const stored = await callTool('memory.store', { kind: 'fact', realm: 'default', text: 'Kafka consumer lag alarms page the streaming team.' });
    expect(stored.id).toMatch(/^mem_/);
    await eventually(async () => ((await embeddedNames())?.includes(stored.id) ? true : undefined), { what: 'the stored entry embedded' });
    expect(await embeddedNames()).toEqual([...before, stored.id].sort());
    const recalled = await callTool('memory.recall', { query: 'kafka consumer lag', limit: 3 });
    expect(recalled.items[0].id).toBe(stored.id);
  });
});
