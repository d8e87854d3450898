/** How a user's Cypher is classified: clauses count, words in strings, names and comments do not. */
import { describe, expect, it } from 'vitest';
import { classifyCypher } from '../../runtime/graph/cypher-guard.js';
import { ServiceError } from '../../runtime/errors.js';

const refusedClause = (query: string): unknown => {
  try {
    classifyCypher(query);
  } catch (error) {
    if (error instanceof ServiceError) return error.details?.['clause'];
    throw error;
  }
  return null;
};

describe('classifyCypher', () => {
  it.each([
    ['MATCH (n) RETURN n', 'read'],
    ["MATCH (n) WHERE n.name = 'CREATE me; DELETE' RETURN n", 'read'],
    ['MATCH (n) RETURN n.`set`, n.created_at AS `merge` // DELETE', 'read'],
    ['MATCH (n) /* SET n.x = 1 */ RETURN {create: 1, delete: n.remove}', 'read'],
    ["CALL QUERY_FTS_INDEX('Service', 'fts', 'x') RETURN node", 'read'],
    ['MATCH (n:Service) SET n.x = 1', 'write'],
    ['create (n:Service {_key: "a"})', 'write'],
    ['MATCH (n) DETACH DELETE n', 'write'],
    ["MERGE (n:Service {_key: 'a'})", 'write'],
    ['MATCH (n) REMOVE n.x', 'write'],
  ])('%s is a %s', (query, kind) => {
    expect(classifyCypher(query)).toBe(kind);
  });

  it.each([
    ["LOAD FROM '/etc/passwd' RETURN *", 'LOAD'],
    ["COPY Service FROM '/tmp/x.csv'", 'COPY'],
    ["ATTACH '/data/other.kuzu' AS o (dbtype kuzu)", 'ATTACH'],
    ['DETACH o', 'DETACH'],
    ['USE o', 'USE'],
    ['CALL threads = 1', 'CALL THREADS'],
    ["CALL CREATE_FTS_INDEX('S', 'i', ['a'])", 'CALL CREATE_FTS_INDEX'],
    ['DROP TABLE Service', 'DROP'],
    ['ALTER TABLE Service ADD x INT64', 'ALTER'],
    ['CREATE NODE TABLE X(_key STRING PRIMARY KEY)', 'TABLE'],
    ['BEGIN TRANSACTION', 'BEGIN'],
  ])('refuses %s', (query, clause) => {
    expect(refusedClause(query)).toBe(clause);
  });

  it('refuses several statements, but not a trailing semicolon or one inside a string', () => {
    expect(() => classifyCypher('MATCH (n) RETURN n; MATCH (m) RETURN m')).toThrow(/one Cypher statement/);
    expect(classifyCypher('MATCH (n) RETURN n;')).toBe('read');
    expect(classifyCypher("MATCH (n) WHERE n.x = 'a;b' RETURN n")).toBe('read');
  });
});
