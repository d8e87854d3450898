/**
 * The `graph` tools through the agent loop: the real server, the real LLM
 * client, the fake LLM scripting the tool calls a model would make to answer
 * "what depends on the payments service?".
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlmServer } from '../fakes/llm/server.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import type { TestServer } from '../helpers/server.js';
import { send, type ChatOrg, execute } from '../runtime/chat-helpers.js';

describe('graph tools in an agent run', () => {
  let server: TestServer, llm: FakeLlmServer, org: ChatOrg;
  beforeAll(async () => {
    ({ server, llm, org } = await startWiredOrg());
    const token = org.session.token;
    await server.request('POST', '/graph/nodes', {
      token,
      body: {
        nodes: [
          { label: 'Service', properties: { _key: 'payments', name: 'Payments API' } },
          { label: 'Service', properties: { _key: 'checkout', name: 'Checkout' } },
        ],
      },
    });
    await server.request('POST', '/graph/relationships', {
      token,
      body: {
        relationships: [
          { type: 'DEPENDS_ON', from_label: 'Service', from_key: 'checkout', to_label: 'Service', to_key: 'payments' },
          { type: 'DEPENDS_ON', from_label: 'Service', from_key: 'invoicing', to_label: 'Service', to_key: 'payments' },
        ],
      },
    });
  });
  afterAll(async () => stopLlmServer({ server, llm }));

  const results = (events: { event: string; data: any }[]) => events.filter((event) => event.event === 'tool_result').map((event) => event.data.result);

  it('finds the service, expands its dependents and answers from them', async () => {
    llm.script([
      { tool_calls: [{ id: 'find', name: 'search_connector_tools', arguments: { query: 'what depends on a service graph' } }] },
      { tool_calls: [{ id: 's', ...execute('graph.search', { query: 'payments', labels: ['Service'] }) }] },
      { tool_calls: [{ id: 'e', ...execute('graph.expand', { id: 'Service:payments', direction: 'in', types: ['DEPENDS_ON'] }) }] },
      {
        tool_calls: [
          {
            id: 'c',
            ...execute('graph.cypher', {
              query: 'MATCH (s:Service)-[:DEPENDS_ON]->(:Service {_key: $key}) RETURN s._key AS k ORDER BY k',
              params: { key: 'payments' },
            }),
          },
        ],
      },
      { text: 'checkout and invoicing depend on payments.' },
    ]);
    const stream = await send(server, org, 'what depends on the payments service?');
    await stream.ended;
    const [found, search, expand, cypher] = results(stream.events);
    const catalog = found.result.tools.map((tool: { name: string; effect: string }) => `${tool.name}:${tool.effect}`);
    expect(catalog).toEqual(expect.arrayContaining(['graph.search:read', 'graph.expand:read']));
    expect(search.result.items.map((item: { id: string }) => item.id)).toEqual(['Service:payments']);
    expect(expand.result.nodes.map((node: { id: string }) => node.id).sort()).toEqual(['Service:checkout', 'Service:invoicing', 'Service:payments']);
    expect(cypher.result).toEqual({ columns: ['k'], rows: [{ k: 'checkout' }, { k: 'invoicing' }] });
    // the model was handed the expansion as its tool message
    const sent = llm.requests.at(-1)?.body?.['messages'] as { role: string; content: string }[];
    expect(sent.filter((message) => message.role === 'tool').at(-1)?.content).toContain('invoicing');
  });

  it('refuses a writing query and a malformed id as tool errors the model reads', async () => {
    llm.script([
      {
        tool_calls: [
          { id: 'w', ...execute('graph.cypher', { query: "MATCH (s:Service {_key: 'payments'}) DETACH DELETE s" }) },
          { id: 'g', ...execute('graph.get', { id: 'payments' }) },
          { id: 'n', ...execute('graph.get', { id: 'Service:nope' }) },
        ],
      },
      { text: 'I cannot do that.' },
    ]);
    const stream = await send(server, org, 'delete payments');
    await stream.ended;
    expect(results(stream.events).map((result) => result.error?.code)).toEqual(['forbidden', 'invalid_node_id', 'not_found']);
    const still = await server.request('GET', '/graph/nodes/Service%3Apayments', { token: org.session.token });
    expect(still.status).toBe(200);
  });
  it('refuses through graph.cypher what /graph/cypher refuses: files, other databases, settings, several statements, deep params', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'graph-tool-'));
    try {
      const marker = join(scratch, 'marker.csv');
      writeFileSync(marker, 'TOOL_MARKER_93,1\n');
      const other = await server.register('Tool other org');
      const put = await server.request('POST', '/graph/nodes', { token: other.token, body: { nodes: [{ label: 'Secret', properties: { _key: 'theirs' } }] } });
      expect(put.status).toBe(200);
      const otherGraph = join(server.dataDir, 'graph', other.organization.id, 'default.kuzu');
      let deep: unknown = 1;
      for (let level = 0; level < 1000; level += 1) deep = [deep];
      const calls: [string, Record<string, unknown>][] = [
        ['load', { query: `LOAD FROM '${marker}' RETURN *` }],
        ['trick', { query: `/* **/ ' */ LOAD FROM '${marker}' RETURN * // '` }],
        ['copy', { query: `COPY (MATCH (s:Service) RETURN s._key) TO '${join(scratch, 'out.csv')}'` }],
        ['attach', { query: `ATTACH '${otherGraph}' AS x (dbtype kuzu)` }],
        ['timeout', { query: 'CALL timeout=0' }],
        ['begin', { query: 'BEGIN TRANSACTION' }],
        ['ddl', { query: 'DROP TABLE Service' }],
        ['several', { query: "MATCH (n) RETURN n; MATCH (s:Service {_key: 'payments'}) DETACH DELETE s" }],
        ['write', { query: "MERGE (s:Service {_key: 'made-by-agent'})" }],
        ['deep', { query: 'RETURN 1 AS x', params: { p: deep } }],
      ];
      llm.script([{ tool_calls: calls.map(([id, args]) => ({ id, ...execute('graph.cypher', args) })) }, { text: 'refused.' }]);
      const stream = await send(server, org, 'try everything');
      await stream.ended;
      const errors = results(stream.events).map((result) => result.error);
      expect(errors.map((error) => error?.code)).toEqual([
        'validation_error',
        'validation_error',
        'validation_error',
        'validation_error',
        'validation_error',
        'validation_error',
        'validation_error',
        'validation_error',
        'forbidden',
        'validation_error',
      ]);
      expect(errors[0].details).toMatchObject({ function: 'READ_CSV_PARALLEL' });
      expect(errors[9].message).toContain('16 levels');
      expect(JSON.stringify(stream.events)).not.toContain('TOOL_MARKER_93');
      expect(existsSync(join(scratch, 'out.csv'))).toBe(false);
      // the realm is as it was, and the other organization's graph never showed
      const token = org.session.token;
      expect((await server.request('GET', '/graph/nodes/Service%3Apayments', { token })).status).toBe(200);
      expect((await server.request('GET', '/graph/nodes/Service%3Amade-by-agent', { token })).status).toBe(404);
      const secret = await server.request('POST', '/graph/cypher', { token, body: { query: 'MATCH (n:Secret) RETURN n._key AS k' } });
      expect(secret.status).toBe(400);
      expect(secret.text).not.toContain('theirs');
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
