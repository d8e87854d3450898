/** /graph over HTTP against the real service (embedded Kùzu under the test DATA_DIR). */
import { describe, expect, it } from 'vitest';
import { ownOrgs, useSuite } from '../helpers/suite.js';
import { addMember } from '../helpers/members.js';
import { oneOrg } from '../helpers/orgs.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

describe('/graph', () => {
  const ctx = useSuite(async (own) => {
    const { server, owner } = ownOrgs(own, await oneOrg({}, { name: 'Graph org' }));
    const viewer = await addMember(server, owner, 'viewer');
    const nodes = await server.request('POST', '/graph/nodes', {
      token: owner.token,
      body: {
        nodes: [
          { label: 'Service', properties: { _key: 'payments', name: 'Payments API', tier: 1 } },
          { label: 'Service', properties: { _key: 'checkout', name: 'Checkout web', tier: 2 } },
          { label: 'Service', properties: { _key: 'ledger/v2', name: 'Ledger' } },
        ],
      },
    });
    expectStatus(nodes, 200).toEqual({ realm: 'default', upserted: 3 });
    const rels = await server.request('POST', '/graph/relationships', {
      token: owner.token,
      body: {
        relationships: [
          { type: 'DEPENDS_ON', from_label: 'Service', from_key: 'checkout', to_label: 'Service', to_key: 'payments' },
          { type: 'DEPENDS_ON', from_label: 'Service', from_key: 'payments', to_label: 'Service', to_key: 'ledger/v2' },
          { type: 'OWNED_BY', from_label: 'Service', from_key: 'payments', to_label: 'Team', to_key: 'pay', properties: { since: 2021 } },
        ],
      },
    });
    expectStatus(rels, 200).toEqual({ realm: 'default', upserted: 3 });
    return { server, owner, viewer };
  });

  it('gets a node by its URL-encoded id', async () => {
    const response = await ctx.server.request('GET', `/graph/nodes/${encodeURIComponent('Service:ledger/v2')}`, { token: ctx.viewer.token });
    expectStatus(response, 200).toEqual({
      id: 'Service:ledger/v2',
      label: 'Service',
      key: 'ledger/v2',
      realm: 'default',
      properties: { _key: 'ledger/v2', name: 'Ledger' },
    });
    const created = await ctx.server.request('GET', '/graph/nodes/Team%3Apay', { token: ctx.viewer.token });
    expect(created.body.properties).toEqual({ _key: 'pay' });
  });

  it('answers 400 invalid_node_id naming the Label:key form, and 404 for an absent node', async () => {
    for (const bad of ['no-colon', encodeURIComponent(':key'), encodeURIComponent('Bad Label:x'), encodeURIComponent('Service:')]) {
      const response = await ctx.server.request('GET', `/graph/nodes/${bad}`, { token: ctx.owner.token });
      expectError(response, 400, 'invalid_node_id');
      expect(response.body.error.message).toContain('Label:key');
    }
    const absent = await ctx.server.request('GET', '/graph/nodes/Service%3Anope', { token: ctx.owner.token });
    expectError(absent, 404, 'not_found');
  });

  it('answers 404 for an unknown realm, and keeps realms apart', async () => {
    const unknown = await ctx.server.request('GET', '/graph/nodes/Service%3Apayments?realm=nope', { token: ctx.owner.token });
    expectError(unknown, 404, 'not_found');
    const realm = await ctx.server.request('POST', '/realms', { token: ctx.owner.token, body: { name: 'staging' } });
    expect(realm.status).toBe(201);
    const empty = await ctx.server.request('GET', '/graph/nodes/Service%3Apayments?realm=staging', { token: ctx.owner.token });
    expect(empty.status).toBe(404);
    const written = await ctx.server.request('POST', '/graph/nodes', {
      token: ctx.owner.token,
      body: { realm: 'staging', nodes: [{ label: 'Service', properties: { _key: 'payments', name: 'staging' } }] },
    });
    expect(written.body).toEqual({ realm: 'staging', upserted: 1 });
    const stats = await ctx.server.request('GET', '/graph/stats?realm=staging', { token: ctx.owner.token });
    expect(stats.body).toEqual({ realm: 'staging', node_count: 1, relationship_count: 0 });
  });

  it("gives another organization 404 on this organization's nodes", async () => {
    const other = await ctx.server.register('Other org');
    const response = await ctx.server.request('GET', '/graph/nodes/Service%3Apayments', { token: other.token });
    expect(response.status).toBe(404);
    const cypher = await ctx.server.request('POST', '/graph/cypher', { token: other.token, body: { query: 'MATCH (n) RETURN count(n) AS c' } });
    expect(cypher.body).toEqual({ columns: ['c'], rows: [{ c: 0 }] });
    const search = await ctx.server.request('GET', '/graph/search?query=payments', { token: other.token });
    expect(search.body).toEqual({ items: [], total: 0 });
  });

  it('searches, ranked, with a label filter', async () => {
    const response = await ctx.server.request('GET', '/graph/search?query=payments&limit=5', { token: ctx.viewer.token });
    expect(response.status).toBe(200);
    expect(response.body.items[0]).toMatchObject({ id: 'Service:payments', label: 'Service', key: 'payments' });
    expect(response.body.items[0].score).toBeGreaterThan(0);
    expect(response.body.total).toBe(1);
    const filtered = await ctx.server.request('GET', '/graph/search?query=payments&labels=Team', { token: ctx.viewer.token });
    expect(filtered.body).toEqual({ items: [], total: 0 });
    const bad = await ctx.server.request('GET', '/graph/search?query=x&limit=1000', { token: ctx.viewer.token });
    expectError(bad, 400, 'validation_error');
  });

  it('expands around a node by direction, depth and type', async () => {
    const response = await ctx.server.request('GET', '/graph/nodes/Service%3Apayments/expand?direction=in&types=DEPENDS_ON', { token: ctx.viewer.token });
    expect(response.status).toBe(200);
    expect(response.body.nodes.map((node: { id: string }) => node.id).sort()).toEqual(['Service:checkout', 'Service:payments']);
    expect(response.body.relationships).toEqual([{ type: 'DEPENDS_ON', from: 'Service:checkout', to: 'Service:payments', properties: {} }]);
    const deep = await ctx.server.request('GET', '/graph/nodes/Service%3Acheckout/expand?depth=2&direction=out', { token: ctx.viewer.token });
    expect(deep.body.nodes).toHaveLength(4);
    expect(deep.body.relationships).toContainEqual({ type: 'OWNED_BY', from: 'Service:payments', to: 'Team:pay', properties: { since: 2021 } });
    const tooDeep = await ctx.server.request('GET', '/graph/nodes/Service%3Acheckout/expand?depth=6', { token: ctx.viewer.token });
    expectError(tooDeep, 400, 'validation_error');
  });

  it('runs read Cypher with parameters for a reader, and refuses a write without graph:write', async () => {
    const read = await ctx.server.request('POST', '/graph/cypher', {
      token: ctx.viewer.token,
      body: { query: 'MATCH (s:Service)-[:DEPENDS_ON]->(t:Service {_key: $key}) RETURN s._key AS dependent', params: { key: 'payments' } },
    });
    expectStatus(read, 200).toEqual({ columns: ['dependent'], rows: [{ dependent: 'checkout' }] });
    const write = await ctx.server.request('POST', '/graph/cypher', {
      token: ctx.viewer.token,
      body: { query: "MATCH (s:Service {_key: 'payments'}) SET s.tier = 9" },
    });
    expectError(write, 403, 'forbidden');
    const allowed = await ctx.server.request('POST', '/graph/cypher', {
      token: ctx.owner.token,
      body: { query: "MATCH (s:Service {_key: 'payments'}) SET s.tier = 0 RETURN s.tier AS tier" },
    });
    expect(allowed.body).toEqual({ columns: ['tier'], rows: [{ tier: 0 }] });
  });

  it('answers a Cypher syntax error with 400 cypher_syntax_error and the engine message', async () => {
    const response = await ctx.server.request('POST', '/graph/cypher', { token: ctx.viewer.token, body: { query: 'MATCH (n RETURN n' } });
    expectError(response, 400, 'cypher_syntax_error');
    expect(response.body.error.message).toMatch(/Parser exception/);
    const outside = await ctx.server.request('POST', '/graph/cypher', {
      token: ctx.owner.token,
      body: { query: "LOAD FROM '/etc/passwd' (file_format='csv') RETURN *" },
    });
    expect(outside.status).toBe(400);
    expect(outside.body.error).toMatchObject({ code: 'validation_error', details: { function: 'READ_CSV_PARALLEL' } });
    const empty = await ctx.server.request('POST', '/graph/cypher', { token: ctx.owner.token, body: { query: '  ' } });
    expect(empty.status).toBe(400);
  });

  it('refuses bad writes with 400 and readers with 403', async () => {
    const badLabel = await ctx.server.request('POST', '/graph/nodes', {
      token: ctx.owner.token,
      body: { nodes: [{ label: 'bad label', properties: { _key: 'x' } }] },
    });
    expectError(badLabel, 400, 'validation_error');
    const noKey = await ctx.server.request('POST', '/graph/nodes', {
      token: ctx.owner.token,
      body: { nodes: [{ label: 'Service', properties: { name: 'x' } }] },
    });
    expect(noKey.status).toBe(400);
    const empty = await ctx.server.request('POST', '/graph/nodes', { token: ctx.owner.token, body: { nodes: [] } });
    expect(empty.status).toBe(400);
    const mismatch = await ctx.server.request('POST', '/graph/nodes', {
      token: ctx.owner.token,
      body: { nodes: [{ label: 'Service', properties: { _key: 'y', tier: 'gold' } }] },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.details).toMatchObject({ label: 'Service', property: 'tier', column_type: 'INT64' });
    const reader = await ctx.server.request('POST', '/graph/nodes', {
      token: ctx.viewer.token,
      body: { nodes: [{ label: 'Service', properties: { _key: 'z' } }] },
    });
    expect(reader.status).toBe(403);
    const anonymous = await ctx.server.request('GET', '/graph/stats');
    expect(anonymous.status).toBe(401);
  });

  it('reports stats per label and type on request', async () => {
    const response = await ctx.server.request('GET', '/graph/stats?labels=true', { token: ctx.viewer.token });
    expectStatus(response, 200).toEqual({
      realm: 'default',
      node_count: 4,
      relationship_count: 3,
      labels: { Service: 3, Team: 1 },
      relationship_types: { DEPENDS_ON: 2, OWNED_BY: 1 },
    });
    const without = await ctx.server.request('GET', '/graph/stats?labels=false', { token: ctx.viewer.token });
    expect(without.body).toEqual({ realm: 'default', node_count: 4, relationship_count: 3 });
  });

  it('reads the labels flag strictly as true or false, and documents it as a boolean', async () => {
    for (const loose of ['1', 'yes', 'on', 'TRUE', '']) {
      const response = await ctx.server.request('GET', `/graph/stats?labels=${loose}`, { token: ctx.viewer.token });
      expect(response.status, loose).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'validation_error', message: expect.stringContaining('labels is true or false') });
    }
    const document = (await ctx.server.request('GET', '/openapi.json')).body;
    const labels = document.paths['/api/v1/graph/stats'].get.parameters.find((parameter: { name: string }) => parameter.name === 'labels');
    expect(labels).toMatchObject({ in: 'query', required: false, schema: { type: 'boolean' } });
    expect(labels.schema.enum).toBeUndefined();
  });

  it('deletes a node with its relationships', async () => {
    const response = await ctx.server.request('DELETE', '/graph/nodes/Service%3Apayments', { token: ctx.owner.token });
    expectStatus(response, 200).toEqual({ id: 'Service:payments', deleted: true, relationships_deleted: 3 });
    const again = await ctx.server.request('DELETE', '/graph/nodes/Service%3Apayments', { token: ctx.owner.token });
    expect(again.status).toBe(404);
    const stats = await ctx.server.request('GET', '/graph/stats', { token: ctx.owner.token });
    expect(stats.body).toMatchObject({ node_count: 3, relationship_count: 0 });
  });

  it('reports the graph engine in /health', async () => {
    const response = await ctx.server.request('GET', '/health');
    expect(response.body.dependencies.graph).toBe('ok');
    expect(response.body.engines.graph).toBe('kuzu');
  });
});
