import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTwoOrgs } from '../helpers/suite.js';
import { createCatalog, type ToolCatalog } from '../../runtime/tools/catalog.js';
import { describeConnectorConformance } from '../../connectors/conformance/index.js';
import { loadPlugins } from '../../connectors/loader.js';
import { createMemoryPlugin } from '../../connectors/memory/index.js';
import { MAX_MEMORY_TEXT_BYTES as TOOL_MAX_TEXT_BYTES, MAX_RECALL_LIMIT as TOOL_MAX_RECALL } from '../../connectors/memory/limits.js';
import { MAX_MEMORY_TEXT_BYTES } from '../../domains/memory/documents.js';
import { MAX_RECALL_LIMIT } from '../../domains/memory/recall.js';
import { memoryPort } from '../../domains/memory/memory-port.js';
import { resolveExecuteConnectorTool } from '../../runtime/tools/meta-tools.js';
import type { ToolOutcome } from '../../runtime/tools/tool-result.js';
import type { Session } from '../helpers/server.js';
import { expectStatus } from '../helpers/expect-status.js';

const REPO_PLUGINS = fileURLToPath(new URL('../../plugins.json', import.meta.url));

const ctx = useTwoOrgs();

describe('memory plugin', () => {
  let catalog: ToolCatalog;

  beforeAll(async () => {
    const ports = { memory: memoryPort(ctx.server.service.services.memory) };
    const registry = await loadPlugins({ pluginsFile: REPO_PLUGINS, builtins: [createMemoryPlugin()], ports });
    // a run that may see no source at all still has the memory tools
    catalog = createCatalog(registry, { sources: [] });
  });

  const execute = async (session: Session, tool: string, args: unknown): Promise<ToolOutcome> => {
    const resolution = resolveExecuteConnectorTool(catalog, { tool, arguments: args });
    if (!resolution.ok) return { error: resolution.error };
    return catalog.run(resolution, { orgId: session.organization.id, signal: new AbortController().signal, actorId: session.user.id });
  };
  const recallIds = async (session: Session, args: Record<string, unknown>): Promise<string[]> => {
    const outcome = await execute(session, 'memory.recall', args);
    if (!('result' in outcome)) throw new Error(JSON.stringify(outcome));
    return (outcome.result as { items: { id: string }[] }).items.map((item) => item.id);
  };
  const create = async (session: Session, body: Record<string, unknown>): Promise<string> => {
    const response = await ctx.server.request('POST', '/memory', { token: session.token, body });
    expect(response.status).toBe(201);
    return response.body.id as string;
  };

  it('bounds its arguments as the REST routes do (the connector keeps its own copy of the limits)', () => {
    expect([TOOL_MAX_TEXT_BYTES, TOOL_MAX_RECALL]).toEqual([MAX_MEMORY_TEXT_BYTES, MAX_RECALL_LIMIT]);
  });

  it('is visible in every run: memory.recall (read) and memory.store (write)', () => {
    expect(catalog.entries().map((entry) => [entry.name, entry.effect, entry.connector, entry.source_id ?? null])).toEqual([
      ['memory.recall', 'read', 'memory', null],
      ['memory.store', 'write', 'memory', null],
    ]);
    expect(catalog.search('remember a preference for later', 1).map((entry) => entry.name)).toEqual(['memory.store']);
  });

  it('stores an entry the REST API then serves, recording who the run acts for', async () => {
    const outcome = await execute(ctx.alice, 'memory.store', {
      kind: 'guideline',
      realm: 'default',
      text: 'Release trains leave every Tuesday at 10:00 UTC.',
      title: ' Release train ',
      tags: ['release'],
      importance: 0.3,
    });
    if (!('result' in outcome)) throw new Error(JSON.stringify(outcome));
    const stored = outcome.result as Record<string, unknown>;
    expect(stored['id']).toMatch(/^mem_/);
    const read = await ctx.server.request('GET', `/memory/${stored['id'] as string}`, { token: ctx.alice.token });
    expectStatus(read, 200).toMatchObject({
      kind: 'guideline',
      realm: 'default',
      text: 'Release trains leave every Tuesday at 10:00 UTC.',
      title: 'Release train',
      tags: ['release'],
      importance: 0.30000001192092896,
      created_by: ctx.alice.user.id,
    });
    expect(stored).toEqual({
      id: read.body.id,
      kind: 'guideline',
      realm: 'default',
      title: 'Release train',
      text: 'Release trains leave every Tuesday at 10:00 UTC.',
      tags: ['release'],
      importance: 0.30000001192092896,
      created_at: read.body.created_at,
    });
    // the other organization cannot read it
    expect((await ctx.server.request('GET', `/memory/${read.body.id as string}`, { token: ctx.bob.token })).status).toBe(404);
  });

  it('refuses a realm that does not exist in the organization, like POST /memory', async () => {
    expect(await execute(ctx.alice, 'memory.store', { kind: 'fact', realm: 'nowhere', text: 'x' })).toEqual({
      error: {
        code: 'invalid_arguments',
        message: 'realm "nowhere" does not exist in this organization',
        details: { issues: [{ path: 'realm', message: 'no realm named "nowhere"' }] },
      },
    });
    // a realm of another organization does not count
    expect((await ctx.server.request('POST', '/realms', { token: ctx.bob.token, body: { name: 'bob-only' } })).status).toBe(201);
    const outcome = await execute(ctx.alice, 'memory.store', { kind: 'fact', realm: 'bob-only', text: 'x' });
    expect('error' in outcome ? outcome.error.code : null).toBe('invalid_arguments');
    expect(await execute(ctx.alice, 'memory.recall', { query: 'x', realm: 'bob-only' })).toEqual({
      error: {
        code: 'invalid_arguments',
        message: 'realm "bob-only" does not exist in this organization',
        details: { issues: [{ path: 'realm', message: 'no realm named "bob-only"' }] },
      },
    });
  });

  it('lists every failing argument of memory.store, and refuses text over 32 KiB of UTF-8', async () => {
    const outcome = await execute(ctx.alice, 'memory.store', { kind: 'rumour', importance: 2, tags: [''] });
    expect(outcome).toEqual({
      error: {
        code: 'invalid_arguments',
        message:
          'invalid arguments for memory.store: realm is required; text is required; kind must be one of "fact", "guideline", "preference", "note"; ' +
          'tags.0 must NOT have fewer than 1 characters; importance must be <= 1',
        details: {
          issues: [
            { path: 'realm', message: 'is required' },
            { path: 'text', message: 'is required' },
            { path: 'kind', message: 'must be one of "fact", "guideline", "preference", "note"' },
            { path: 'tags.0', message: 'must NOT have fewer than 1 characters' },
            { path: 'importance', message: 'must be <= 1' },
          ],
        },
      },
    });
    // 16,385 two-byte characters: under any character limit, over the byte limit
    expect(await execute(ctx.alice, 'memory.store', { kind: 'note', realm: 'default', text: 'é'.repeat(16 * 1024 + 1) })).toEqual({
      error: {
        code: 'invalid_arguments',
        message: 'text is at most 32 KiB (32768 bytes of UTF-8)',
        details: { issues: [{ path: 'text', message: 'is over 32768 bytes' }] },
      },
    });
  });

  it('recalls by relevance weighted by importance, exactly as POST /memory/recall ranks', async () => {
    const session = await ctx.server.register('Recall Co');
    const low = await create(session, { text: 'Deploys go through the canary pipeline first.', importance: 0.1 });
    const high = await create(session, { text: 'Deploys go through the canary pipeline first, always.', importance: 1 });
    const mid = await create(session, { text: 'The canary pipeline deploys to one region.', importance: 0.5 });
    await create(session, { text: 'Lunch is at noon.', importance: 1 });
    const rest = await ctx.server.request('POST', '/memory/recall', { token: session.token, body: { query: 'canary pipeline deploys', limit: 10 } });
    expect(rest.status).toBe(200);
    const restRanking = (rest.body.items as { memory: { id: string }; score: number }[]).map((item) => [item.memory.id, item.score]);

    const outcome = await execute(session, 'memory.recall', { query: 'canary pipeline deploys' });
    if (!('result' in outcome)) throw new Error(JSON.stringify(outcome));
    const items = (outcome.result as { items: { id: string; score: number; text: string; importance: number }[] }).items;
    expect(items.map((item) => [item.id, item.score])).toEqual(restRanking);
    expect(new Set(items.map((item) => item.id))).toEqual(new Set([low, high, mid]));
    // importance 1 beats importance 0.1 on near-identical text
    expect(items.findIndex((item) => item.id === high)).toBeLessThan(items.findIndex((item) => item.id === low));
    expect(await recallIds(session, { query: 'canary pipeline deploys', limit: 1 })).toEqual([restRanking[0]?.[0]]);
  });

  it('filters by realm and kind', async () => {
    const session = await ctx.server.register('Realm Co');
    expect((await ctx.server.request('POST', '/realms', { token: session.token, body: { name: 'ops' } })).status).toBe(201);
    const inOps = await create(session, { realm: 'ops', kind: 'guideline', text: 'Rotate the on-call pager weekly.' });
    const inDefault = await create(session, { kind: 'fact', text: 'The on-call pager is a phone.' });
    expect(await recallIds(session, { query: 'on-call pager', realm: 'ops' })).toEqual([inOps]);
    expect(await recallIds(session, { query: 'on-call pager', kind: 'fact' })).toEqual([inDefault]);
  });

  it('never recalls another organization memories', async () => {
    const secret = 'Quarterly zebracorn numbers are confidential.';
    const aliceEntry = await create(ctx.alice, { text: secret, importance: 1 });
    const bobEntry = await create(ctx.bob, { text: 'Zebracorn is our mascot.' });
    expect(await recallIds(ctx.alice, { query: 'zebracorn' })).toEqual([aliceEntry]);
    expect(await recallIds(ctx.bob, { query: 'zebracorn' })).toEqual([bobEntry]);
    const stranger = await ctx.server.register('Stranger Ltd');
    expect(await recallIds(stranger, { query: 'zebracorn confidential numbers' })).toEqual([]);
  });

  it('answers cancelled and stores nothing when the run is already cancelled', async () => {
    const session = await ctx.server.register('Cancel Co');
    const resolution = resolveExecuteConnectorTool(catalog, { tool: 'memory.store', arguments: { kind: 'note', realm: 'default', text: 'never stored' } });
    if (!resolution.ok) throw new Error(JSON.stringify(resolution.error));
    const controller = new AbortController();
    controller.abort();
    expect(await catalog.run(resolution, { orgId: session.organization.id, signal: controller.signal })).toEqual({
      error: { code: 'cancelled', message: 'the run was cancelled before the tool finished' },
    });
    expect((await ctx.server.request('GET', '/memory', { token: session.token })).body.total).toBe(0);
  });
});

describeConnectorConformance(createMemoryPlugin, {
  validConfig: {},
  // bound lazily: the server starts in beforeAll
  ports: { memory: (scope) => memoryPort(ctx.server.service.services.memory)(scope) },
  invalidConfig: { token: 'memory takes no config' },
  orgId: () => ctx.alice.organization.id,
  actorId: 'agt_conformance',
  toolCalls: [
    { tool: 'recall', args: { query: 'release train' } },
    { tool: 'store', args: { kind: 'note', realm: 'default', text: 'Written by the conformance kit.' } },
    { tool: 'memory.store', args: { kind: 'note', realm: 'no-such-realm', text: 'x' }, expect: { error_code: 'invalid_arguments' } },
    {
      tool: 'recall',
      args: { query: 'conformance kit', limit: 1 },
      expect: (outcome) => {
        expect('result' in outcome ? (outcome.result as { items: { text: string }[] }).items.map((item) => item.text) : outcome).toEqual([
          'Written by the conformance kit.',
        ]);
      },
    },
  ],
});
