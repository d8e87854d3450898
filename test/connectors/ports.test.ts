/**
 * Connector ports (`requires`): a plugin reaches the service's own stores
 * only through the ports it declares. The loader refuses one that requires a
 * port the service does not offer (or does not know); one requiring an
 * offered port gets it in `ctx.ports`, bound to the calling organization.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTwoOrgs } from '../helpers/suite.js';
import { portOf, type ToolContext } from '../../connectors/contract.js';
import { checkPlugin, loadPlugins, PluginLoadError } from '../../connectors/loader.js';
import { memoryPort } from '../../domains/memory/memory-port.js';
import { createCatalog } from '../../runtime/tools/catalog.js';
import { resolveExecuteConnectorTool } from '../../runtime/tools/meta-tools.js';
import { type Session } from '../helpers/server.js';
import { plugin, tool } from './test-plugins.js';

/** a plugins.json listing nothing: only the plugins a test passes load */
const noPluginsFile = (): string => {
  const file = join(mkdtempSync(join(tmpdir(), 'ports-')), 'plugins.json');
  writeFileSync(file, JSON.stringify({ plugins: [] }));
  return file;
};

/** a third-party plugin that keeps notes in the organization's memory */
const notes = plugin({
  kind: 'notes',
  sourceless: true,
  requires: ['memory'],
  tools: [
    tool({
      name: 'remember',
      effect: 'write',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      run: async (args, ctx) => {
        const entry = await portOf(ctx, 'memory').store({
          kind: 'note',
          realm: 'default',
          text: String(args['text']),
          title: null,
          tags: [],
          importance: 0.5,
          created_by: 'notes',
        });
        return { id: entry.id };
      },
    }),
    tool({
      name: 'recall',
      input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false },
      run: async (args, ctx) => ({ ids: (await portOf(ctx, 'memory').recall({ query: String(args['query']), limit: 10 })).map(({ entry }) => entry.id) }),
    }),
  ],
});

/** a plugin that requires nothing and reports what ports it was given */
let seen: ToolContext | null = null;
const plain = plugin({
  kind: 'plain',
  sourceless: true,
  tools: [tool({ name: 'look', run: async (_args, ctx) => ((seen = ctx), { ok: true }) })],
});

describe('ports at load', () => {
  it('refuses a plugin requiring a port the service does not offer; the others load', async () => {
    const graphReader = plugin({ kind: 'graph_reader', sourceless: true, requires: ['graph', 'memory'] });
    const registry = await loadPlugins({ pluginsFile: noPluginsFile(), builtins: [graphReader, plain], ports: { memory: () => ({}) as never } });
    expect(registry.plugins.map((loaded) => loaded.kind)).toEqual(['plain']);
    expect(registry.problems).toEqual([
      { plugin: 'graph_reader', origin: 'built-in', problems: ['requires the port "graph", which this service does not offer'] },
    ]);
  });

  it('refuses a plugin requiring a port without any offered at all', async () => {
    const registry = await loadPlugins({ pluginsFile: noPluginsFile(), builtins: [notes] });
    expect(registry.plugins).toEqual([]);
    expect(registry.problems[0]?.problems).toEqual(['requires the port "memory", which this service does not offer']);
  });

  it('refuses an unknown port name, a port named twice and a requires that is not a list', () => {
    const problemsOf = (requires: unknown): readonly string[] => {
      try {
        checkPlugin({ ...plain, requires }, 'built-in');
      } catch (error) {
        if (error instanceof PluginLoadError) return error.problems;
        throw error;
      }
      throw new Error('accepted');
    };
    expect(problemsOf(['email'])).toEqual(['requires an unknown port "email" (ports: graph, files, memory, webhooks, rag, media)']);
    expect(problemsOf(['memory', 'memory'])).toEqual(['requires names a port twice']);
    expect(problemsOf('memory')).toEqual(['requires must be an array of port names']);
  });
});

describe('ports at run time', () => {
  const ctx = useTwoOrgs();

  const run = async (session: Session, name: string, args: Record<string, unknown>) => {
    const registry = await loadPlugins({
      pluginsFile: noPluginsFile(),
      builtins: [notes, plain],
      ports: { memory: memoryPort(ctx.server.service.services.memory) },
    });
    expect(registry.problems).toEqual([]);
    const catalog = createCatalog(registry, { sources: [] });
    const resolution = resolveExecuteConnectorTool(catalog, { tool: name, arguments: args });
    if (!resolution.ok) throw new Error(JSON.stringify(resolution.error));
    return catalog.run(resolution, { orgId: session.organization.id, signal: new AbortController().signal });
  };

  it("gives a third-party plugin the memory port it requires, bound to the caller's organization", async () => {
    const stored = await run(ctx.alice, 'notes.remember', { text: 'The lighthouse key is under the mat.' });
    if (!('result' in stored)) throw new Error(JSON.stringify(stored));
    const id = (stored.result as { id: string }).id;
    // the service's own REST API serves what the plugin stored
    expect((await ctx.server.request('GET', `/memory/${id}`, { token: ctx.alice.token })).body).toMatchObject({ kind: 'note', created_by: 'notes' });
    expect(await run(ctx.alice, 'notes.recall', { query: 'lighthouse key' })).toEqual({ result: { ids: [id] } });
    // another organization's call reaches only its own memory
    expect(await run(ctx.bob, 'notes.recall', { query: 'lighthouse key' })).toEqual({ result: { ids: [] } });
    expect((await ctx.server.request('GET', `/memory/${id}`, { token: ctx.bob.token })).status).toBe(404);
  });

  it('gives a plugin that requires nothing no ports', async () => {
    expect(await run(ctx.alice, 'plain.look', {})).toEqual({ result: { ok: true } });
    expect(seen?.ports).toBeUndefined();
  });
});
