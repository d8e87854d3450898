/**
 * The upsert routes' fast body check (issue 20) against their zod schemas:
 * whatever it accepts, zod accepts with the same result; what zod refuses,
 * it leaves to zod (so the error reads the same).
 */
import { describe, expect, it } from 'vitest';
import { fastNodesBody, fastRelationshipsBody, nodesBody, relationshipsBody } from '../../gateway/routes/graph-bodies.js';

const node = (extra: Record<string, unknown> = {}) => ({ label: 'Service', properties: { _key: 'a', name: 'A', ...extra } });
const rel = (extra: Record<string, unknown> = {}) => ({ type: 'DEPENDS_ON', from_label: 'Service', from_key: 'a', to_label: 'Team', to_key: 'b', ...extra });

const nodeBodies: [string, unknown][] = [
  ['one node', { nodes: [node()] }],
  ['a realm', { realm: 'prod', nodes: [node(), node({ tier: 2, tags: ['x'], nested: { a: 1 } })] }],
  ['a key of 512 characters', { nodes: [{ label: 'L', properties: { _key: 'k'.repeat(512) } }] }],
  ['no nodes', { nodes: [] }],
  ['nodes not a list', { nodes: {} }],
  ['a body that is a list', [node()]],
  ['null', null],
  ['an unknown field', { nodes: [node()], extra: 1 }],
  ['an unknown node field', { nodes: [{ ...node(), id: 'x' }] }],
  ['no properties', { nodes: [{ label: 'Service' }] }],
  ['properties a list', { nodes: [{ label: 'Service', properties: [] }] }],
  ['properties null', { nodes: [{ label: 'Service', properties: null }] }],
  ['no _key', { nodes: [{ label: 'Service', properties: { name: 'A' } }] }],
  ['an empty _key', { nodes: [{ label: 'Service', properties: { _key: '' } }] }],
  ['a numeric _key', { nodes: [{ label: 'Service', properties: { _key: 1 } }] }],
  ['a _key too long', { nodes: [{ label: 'Service', properties: { _key: 'k'.repeat(513) } }] }],
  ['a bad label', { nodes: [{ label: '1Service', properties: { _key: 'a' } }] }],
  ['a label too long', { nodes: [{ label: 'L'.repeat(65), properties: { _key: 'a' } }] }],
  ['a label not text', { nodes: [{ label: 7, properties: { _key: 'a' } }] }],
  ['an empty realm', { realm: '', nodes: [node()] }],
  ['a realm too long', { realm: 'r'.repeat(101), nodes: [node()] }],
  ['a realm not text', { realm: 3, nodes: [node()] }],
  ['too many nodes', { nodes: Array.from({ length: 10_001 }, () => node()) }],
  ['the most nodes', { nodes: Array.from({ length: 10_000 }, (_, i) => ({ label: 'L', properties: { _key: `k${i}` } })) }],
  ['a __proto__ property', { nodes: [{ label: 'L', properties: JSON.parse('{"_key": "a", "__proto__": {"x": 1}}') as unknown }] }],
];

const relationshipBodies: [string, unknown][] = [
  ['one relationship', { relationships: [rel()] }],
  ['with properties', { realm: 'prod', relationships: [rel({ properties: { since: 2021 } }), rel({ properties: {} })] }],
  ['no relationships', { relationships: [] }],
  ['an unknown field', { relationships: [rel({ weight: 1 })] }],
  ['properties null', { relationships: [rel({ properties: null })] }],
  ['properties a list', { relationships: [rel({ properties: [1] })] }],
  ['no to_key', { relationships: [{ type: 'T', from_label: 'A', from_key: 'a', to_label: 'B' }] }],
  ['an empty from_key', { relationships: [rel({ from_key: '' })] }],
  ['a bad type', { relationships: [rel({ type: 'DEPENDS-ON' })] }],
  ['a bad to_label', { relationships: [rel({ to_label: '_Team' })] }],
  ['nodes instead', { nodes: [node()] }],
  ['too many', { relationships: Array.from({ length: 10_001 }, () => rel()) }],
];

/** bodies zod takes that the fast check leaves to it all the same (it need not take every valid body, only never a bad one) */
const LEFT_TO_ZOD = new Set(['a __proto__ property']);

/** the fast check agrees with zod: the same result when it accepts, undefined when zod refuses */
function expectAgreement(
  name: string,
  fast: (value: unknown) => unknown,
  schema: { safeParse(value: unknown): { success: boolean; data?: unknown } },
  body: unknown,
): void {
  const slow = schema.safeParse(body);
  const quick = fast(body);
  if (!slow.success || LEFT_TO_ZOD.has(name)) expect(quick).toBeUndefined();
  else expect(quick).toEqual(slow.data);
}

describe('fast upsert body checks', () => {
  it.each(nodeBodies)('nodes: %s', (name, body) => expectAgreement(name, fastNodesBody, nodesBody, body));
  it.each(relationshipBodies)('relationships: %s', (name, body) => expectAgreement(name, fastRelationshipsBody, relationshipsBody, body));

  it('leaves every refused body to zod (a bad record deep in a batch included)', () => {
    const nodes = Array.from({ length: 5000 }, (_, i) => node({ n: i }));
    nodes[4321] = { label: 'Service', properties: { _key: '' } } as never;
    expect(fastNodesBody({ nodes })).toBeUndefined();
    expect(nodesBody.safeParse({ nodes }).success).toBe(false);
  });
});
