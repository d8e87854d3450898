/**
 * A CSV import's plain lines take a fast lane (runtime/graph/import/csv-lines.ts)
 * and the others the general reader. The same rows, once as written and once
 * with every line forced onto the general reader (a quoted key reads as the
 * same key), must leave the same graph; errors after many fast lines still
 * name their line. Real server, real Kùzu.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../helpers/expect-status.js';
import { startTestServer } from '../helpers/server.js';
import { useSuite } from '../helpers/suite.js';

const CSV = 'text/csv';

/** cell values of every kind the lane takes or declines: canonical and not, blanks, non-ASCII, escapes, empty */
const NAMES = ['web', ' padded', 'trailing ', 'café', 'naïve', 'a\\b', 'semi;colon', 'NULLish', '', 'x'];
const INTS = ['0', '7', '-12', '007', '+5', ' 3', '123456789012345', ''];
const FLOATS = ['2.5', '1.50', '1e3', '-0.25', '3', '', '0.1'];
const BOOLS = ['true', 'false', 'TRUE', ' false', ''];

/** quotes a cell where CSV needs it (the generator's own rule, not the service's) */
const cell = (text: string, force = false): string => (force || /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

function nodeLines(count: number, general: boolean): string[] {
  return Array.from({ length: count }, (_, i) => {
    const label = i % 7 === 3 ? 'Team' : 'Host';
    const values = [
      label,
      cell(`h-${i}`, general),
      cell(NAMES[i % NAMES.length]!),
      INTS[(i * 3) % INTS.length]!,
      FLOATS[(i * 5) % FLOATS.length]!,
      BOOLS[(i * 7) % BOOLS.length]!,
    ];
    return values.join(',');
  });
}

function relLines(count: number, nodes: number, general: boolean): string[] {
  return Array.from({ length: count }, (_, j) => {
    const from = j % nodes;
    const to = (from + 1 + ((j * 31) % (nodes - 1))) % nodes;
    const end = (i: number) => `${i % 7 === 3 ? 'Team' : 'Host'}:h-${i}`;
    return [j % 5 === 0 ? 'OWNS' : 'LINKS', cell(end(from), general), end(to), INTS[j % INTS.length]!].join(',');
  });
}

describe('CSV import: the fast lane and the general reader', () => {
  const ctx = useSuite(async (own) => {
    const server = own(await startTestServer());
    const alice = await server.register('Lanes Alice');
    for (const name of ['lane', 'general', 'crlf', 'order', 'bad', 'shift', 'long']) {
      expect((await server.request('POST', '/realms', { token: alice.token, body: { name } })).status).toBe(201);
    }
    return { server, alice };
  });

  const post = (realm: string, body: string) =>
    ctx.server.request('POST', `/graph/import?realm=${realm}`, { token: ctx.alice.token, body, headers: { 'content-type': CSV } });
  const rows = async (realm: string, query: string) => {
    const answer = await ctx.server.request('POST', '/graph/cypher', { token: ctx.alice.token, body: { realm, query } });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.rows as Record<string, unknown>[];
  };
  const dump = async (realm: string) => ({
    hosts: await rows(realm, 'MATCH (n:Host) RETURN n._key AS k, n.name AS name, n.size AS size, n.ratio AS ratio, n.up AS up ORDER BY k'),
    teams: await rows(realm, 'MATCH (n:Team) RETURN n._key AS k, n.name AS name, n.size AS size, n.ratio AS ratio, n.up AS up ORDER BY k'),
    links: await rows(realm, 'MATCH (a)-[r]->(b) RETURN label(r) AS t, a._key AS src, b._key AS dst, r.weight AS w ORDER BY t, src, dst, w'),
  });
  const NODES = 1_500;
  const HEADER = 'label,_key,name,size:int,ratio:float,up:bool';
  const REL_HEADER = 'type,_from,_to,weight:int';

  it('leaves the same graph whichever way each line is read', async () => {
    for (const [realm, general] of [
      ['lane', false],
      ['general', true],
    ] as const) {
      const nodes = await post(realm, [HEADER, ...nodeLines(NODES, general)].join('\n') + '\n');
      expect(nodes.status, nodes.text).toBe(200);
      expect(nodes.body).toMatchObject({ nodes: NODES, relationships: 0, method: 'copy' });
      const rels = await post(realm, [REL_HEADER, ...relLines(2 * NODES, NODES, general)].join('\n') + '\n');
      expect(rels.status, rels.text).toBe(200);
      expect(rels.body).toMatchObject({ nodes: 0, relationships: 2 * NODES, method: 'copy' });
    }
    const lane = await dump('lane');
    expect(lane.hosts.length + lane.teams.length).toBe(NODES);
    expect(lane.links.length).toBe(2 * NODES);
    expect(lane).toEqual(await dump('general'));
    // spot checks of what each kind of cell became
    const host = (key: string) => lane.hosts.find((row) => row['k'] === key);
    expect(host('h-0')).toEqual({ k: 'h-0', name: 'web', size: 0, ratio: 2.5, up: true });
    expect(host('h-1')).toEqual({ k: 'h-1', name: ' padded', size: 7, ratio: null, up: true });
    expect(host('h-2')).toEqual({ k: 'h-2', name: 'trailing ', size: 123456789012345, ratio: -0.25, up: null });
    expect(host('h-5')).toEqual({ k: 'h-5', name: 'a\\b', size: null, ratio: 3, up: true });
    expect(host('h-9')).toMatchObject({ name: 'x', size: 7 });
    expect(host('h-8')).toMatchObject({ name: null });
  });

  it('reads CRLF files and header columns in any order the same way', async () => {
    const nodes = ['size:int,_key,name,label', '1,a,first,Host', '2,b,second,Host', '3,c,"third, quoted",Host'].join('\r\n') + '\r\n';
    expect((await post('crlf', nodes)).status).toBe(200);
    const rels = ['_to,weight:int,type,_from', 'Host:b,5,LINKS,Host:a', 'Host:c,6,LINKS,Host:b'].join('\r\n');
    expect((await post('crlf', rels)).status).toBe(200);
    expect(await rows('crlf', 'MATCH (n:Host) RETURN n._key AS k, n.name AS name, n.size AS size ORDER BY k')).toEqual([
      { k: 'a', name: 'first', size: 1 },
      { k: 'b', name: 'second', size: 2 },
      { k: 'c', name: 'third, quoted', size: 3 },
    ]);
    expect(await rows('crlf', 'MATCH (a)-[r:LINKS]->(b) RETURN a._key AS src, b._key AS dst, r.weight AS w ORDER BY src')).toEqual([
      { src: 'a', dst: 'b', w: 5 },
      { src: 'b', dst: 'c', w: 6 },
    ]);
  });

  it('reads lines longer than a piece of the body, multi-byte characters split anywhere', async () => {
    const long = 'é€𝄞'.repeat(40_000);
    const quoted = `a "quote", and\n${'ü'.repeat(70_000)}`;
    const body = ['label,_key,name', `Host,long,${long}`, `Host,quoted,"${quoted.replaceAll('"', '""')}"`, 'Host,short,plain'].join('\n') + '\n';
    const answer = await post('long', body);
    expect(answer.status, answer.text).toBe(200);
    expect(await rows('long', 'MATCH (n:Host) RETURN n._key AS k, n.name AS name ORDER BY k')).toEqual([
      { k: 'long', name: long },
      { k: 'quoted', name: quoted },
      { k: 'short', name: 'plain' },
    ]);
  });

  it('keeps every value when the first line of a label lacks a column the next ones give', async () => {
    const body = ['label,_key,name,size:int', 'Host,a,first,', 'Host,b,second,2', 'Host,c,third,3', 'Team,t,,9', 'Team,u,crew,10'].join('\n') + '\n';
    const answer = await post('order', body);
    expect(answer.status, answer.text).toBe(200);
    expect(await rows('order', 'MATCH (n) RETURN label(n) AS l, n._key AS k, n.name AS name, n.size AS size ORDER BY k')).toEqual([
      { l: 'Host', k: 'a', name: 'first', size: null },
      { l: 'Host', k: 'b', name: 'second', size: 2 },
      { l: 'Host', k: 'c', name: 'third', size: 3 },
      { l: 'Team', k: 't', name: null, size: 9 },
      { l: 'Team', k: 'u', name: 'crew', size: 10 },
    ]);
  });

  it('names the line of an error that follows thousands of fast lines and a cell spanning two lines', async () => {
    const good = nodeLines(5_000, false);
    const cases: [string[], string][] = [
      // line 1 is the header; the quoted cell on line 2 holds a line break, so the next record starts on line 4
      [
        ['Host,q,"two\nlines",1,2.5,true', ...good, 'Host,bad key?,x,notanumber,1,true'],
        `line ${4 + good.length}: column size: "notanumber" is not an integer`,
      ],
      [[...good, '9bad,k,x,1,1,true'], `line ${2 + good.length}: "label" must be letters`],
      [[...good, 'Host,k,x,1,1'], `line ${2 + good.length}: 5 cells where the header has 6`],
      [[...good, 'Host,,x,1,1,true'], `line ${2 + good.length}: "_key" must be a non-empty string`],
      [[...good.slice(0, 10), 'Host,k,x,99999999999999999,1,true', ...good], 'line 12: column size: "99999999999999999" is not an integer'],
    ];
    for (const [lines, message] of cases) {
      const answer = await post('bad', [HEADER, ...lines].join('\n') + '\n');
      expectError(answer, 400, 'validation_error');
      expect(answer.body.error.message).toContain(message);
    }
    const rels: [string[], string][] = [
      [[...relLines(3_000, 100, false), 'LINKS,Host,Host:h-1,1'], 'line 3002: "_from" must be a node id'],
      [[...relLines(3_000, 100, false), 'Host,Host:h-0,Host:h-1,1'], 'line 3002: "Host" is a node label'],
    ];
    for (const [lines, message] of rels) {
      const answer = await post('bad', [REL_HEADER, ...lines].join('\n') + '\n');
      expectError(answer, 400, 'validation_error');
      expect(answer.body.error.message).toContain(message);
    }
    // nothing was written
    expect((await ctx.server.request('GET', '/graph/stats?realm=bad', { token: ctx.alice.token })).body).toMatchObject({
      node_count: 0,
      relationship_count: 0,
    });
  });

  it('loads a file of one label whose values change type mid-way only as the general reader would: refused, naming the line', async () => {
    const lines = Array.from({ length: 3_000 }, (_, i) => `Host,h-${i},n${i},${i}`);
    lines.push('Host,h-x,nx,1.5');
    const answer = await post('shift', ['label,_key,name,size:int', ...lines].join('\n') + '\n');
    expectError(answer, 400, 'validation_error');
    expect(answer.body.error.message).toContain('line 3002: column size: "1.5" is not an integer');
  });
});
