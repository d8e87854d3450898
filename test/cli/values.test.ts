/** The client's pure argument parsers: --prop values, node references, node and relationship input forms. */
import { describe, expect, it } from 'vitest';
import { normalizeNode, normalizeRelationship } from '../../cli/commands/graph.js';
import { CliError } from '../../cli/errors.js';
import { parseNodeRef, parseProps, parseValue } from '../../cli/values.js';

describe('--prop KEY=VALUE', () => {
  it('parses boolean, integer, float, else string', () => {
    expect(parseValue('true')).toBe(true);
    expect(parseValue('false')).toBe(false);
    expect(parseValue('42')).toBe(42);
    expect(parseValue('-7')).toBe(-7);
    expect(parseValue('3.25')).toBe(3.25);
    expect(parseValue('1e3')).toBe(1000);
    expect(parseValue('True')).toBe('True');
    expect(parseValue('12abc')).toBe('12abc');
    expect(parseValue('')).toBe('');
    // beyond 2^53 the text is kept rather than a rounded number
    expect(parseValue('90071992547409930')).toBe('90071992547409930');
    expect(parseProps(['tier=1', 'name=check=out', 'on=true'])).toEqual({ tier: 1, name: 'check=out', on: true });
  });

  it('a prop without KEY= is a usage error', () => {
    expect(() => parseProps(['novalue'])).toThrow(CliError);
    expect(() => parseProps(['=x'])).toThrow('--prop takes KEY=VALUE');
  });
});

describe('node references', () => {
  it('Label:key, the key may hold colons', () => {
    expect(parseNodeRef('Service:checkout', '--id')).toEqual({ label: 'Service', key: 'checkout' });
    expect(parseNodeRef('Url:https://x.test/a', '--id')).toEqual({ label: 'Url', key: 'https://x.test/a' });
  });

  it('anything else is invalid_node_ref (exit 8)', () => {
    for (const bad of ['Service', 'Service:', ':key', '1Label:key', 'Bad Label:k']) {
      try {
        parseNodeRef(bad, '--id');
        expect.unreachable(bad);
      } catch (error) {
        expect((error as CliError).exitCode, bad).toBe(8);
      }
    }
  });
});

describe('input forms', () => {
  it('accepts nodes as {label, properties._key}, {label, key, properties} and {label, _key, ...}', () => {
    expect(normalizeNode({ label: 'A', properties: { _key: 'a', x: 1 } }, 0)).toEqual({ label: 'A', properties: { _key: 'a', x: 1 } });
    expect(normalizeNode({ label: 'A', key: 7, properties: { x: 1 } }, 0)).toEqual({ label: 'A', properties: { _key: '7', x: 1 } });
    expect(normalizeNode({ label: 'A', _key: 'a', name: 'n' }, 0)).toEqual({ label: 'A', properties: { _key: 'a', name: 'n' } });
    expect(() => normalizeNode({ label: 'A', properties: {} }, 3)).toThrow('node 3 (A) has no "key"');
    expect(() => normalizeNode({ key: 'a' }, 1)).toThrow('node 1 has no "label"');
  });

  it('accepts relationships with from/to references or explicit label and key fields', () => {
    const expected = { type: 'USES', from_label: 'A', from_key: 'a', to_label: 'B', to_key: 'b' };
    expect(normalizeRelationship({ type: 'USES', from: 'A:a', to: 'B:b' }, 0)).toEqual(expected);
    expect(normalizeRelationship({ ...expected, properties: { w: 1 } }, 0)).toEqual({ ...expected, properties: { w: 1 } });
    expect(() => normalizeRelationship({ type: 'USES', from: 'A:a' }, 2)).toThrow('relationship 2 needs "to"');
  });
});
