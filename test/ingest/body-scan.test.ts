import { describe, expect, it } from 'vitest';
import { scanBody } from '../../ingest/body-scan.js';
import { findTooDeep } from '../../runtime/json-depth.js';

/** The names a full parse sees, in first-appearance order (by line, then position). */
function parsedKeys(body: string): string[] {
  const seen = new Set<string>();
  for (const line of body.split('\n')) {
    if (line.trim() === '') continue;
    for (const key of Object.keys(JSON.parse(line) as object)) seen.add(key);
  }
  return [...seen];
}

describe('scanBody: depth bound and top-level names in one pass', () => {
  it('reads the names of valid NDJSON as a full parse does', () => {
    const rows = [
      { at: '2026-11-25T00:00:00Z', label: 'a', body: 'x "quoted" {not a bracket} \\ back', nested: { inner: 1, deep: [{ k: 'v' }] } },
      { é名: 'unicode name', label: 'b', list: ['"', '\\', '{', '}'], n: 1.5, t: true, z: null },
      { label: 'c', 'with space': '', empty: {}, arr: [] },
      { nested: { label: 'not top-level' }, late: 'new' },
    ];
    const body = rows.map((row) => JSON.stringify(row)).join('\n') + '\n\n   \n' + JSON.stringify({ last: 1 });
    const scan = scanBody(Buffer.from(body), 64);
    expect(scan.tooDeepAt).toBe(-1);
    expect(scan.keys).toEqual(parsedKeys(body));
  });

  it('leaves names holding an escape to DuckDB (null)', () => {
    const body = `${JSON.stringify({ 'a"b': 1 })}\n`;
    expect(scanBody(Buffer.from(body), 64).keys).toBeNull();
    expect(scanBody(Buffer.from('{"a\\u0062": 1}\n'), 64).keys).toBeNull();
  });

  it('finds the first bracket past the bound where findTooDeep does, per line', () => {
    const deep = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);
    const cases = [
      `{"a": ${deep(10)}}\n{"b": ${deep(3)}}`,
      `{"a": "[[[[[[[[[[[[[[[["}\n{"b": ${deep(6)}}`,
      // a broken line (unterminated string, a backslash before the newline) must not swallow the next
      `{"a": "unterminated [[[[\\\n{"b": ${deep(6)}}`,
      `{"a": "x\\"[[[[[[[[["}\n{"c": 1}`,
      `{"a": ${deep(4)}}`,
    ];
    for (const text of cases) {
      const bytes = Buffer.from(text);
      expect(scanBody(bytes, 5).tooDeepAt, text).toBe(findTooDeep(bytes, 5, true)?.offset ?? -1);
    }
  });
});
